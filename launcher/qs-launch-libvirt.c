/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libvirt calls, each turning virGetLastError into a GError so the caller
 * decides whether to report it. */

#include <fcntl.h>
#include <string.h>
#include <gio/gio.h>
#include <libvirt/virterror.h>
#include "qs-launch-libvirt.h"

static void quiet(void *data, virErrorPtr err)
{
    /* libvirt prints every error to stderr by default; we report ours. */
    (void)data;
    (void)err;
}

static void set_virt_error(GError **error, const char *what)
{
    virErrorPtr e = virGetLastError();

    g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: %s", what,
                e && e->message ? e->message : "unknown libvirt error");
}

virConnectPtr qs_virt_connect(const char *uri, GError **error)
{
    virConnectPtr conn;

    virSetErrorFunc(NULL, quiet);
    conn = virConnectOpen(uri);
    if (!conn) {
        g_autofree char *what = g_strdup_printf("cannot connect to %s", uri);

        set_virt_error(error, what);
    }
    return conn;
}

virDomainPtr qs_virt_lookup(virConnectPtr conn, const char *name,
                            GError **error)
{
    virDomainPtr dom = virDomainLookupByName(conn, name);
    guint64 id = 0;

    if (!dom && strlen(name) == 36) {
        dom = virDomainLookupByUUIDString(conn, name);
    }
    if (!dom && g_ascii_string_to_unsigned(name, 10, 1, G_MAXINT, &id, NULL)) {
        dom = virDomainLookupByID(conn, (int)id);
    }
    if (!dom) {
        virErrorPtr e = virGetLastError();

        if (e && e->code == VIR_ERR_NO_DOMAIN) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                        "no domain '%s'", name);
        } else {
            g_autofree char *what = g_strdup_printf("looking up '%s'", name);

            set_virt_error(error, what);
        }
    }
    return dom;
}

char *qs_virt_live_xml(virDomainPtr dom, GError **error)
{
    char *xml = virDomainGetXMLDesc(dom, 0);
    char *copy;

    if (!xml) {
        set_virt_error(error, "reading the domain XML");
        return NULL;
    }
    copy = g_strdup(xml);
    free(xml);
    return copy;
}

int qs_virt_open_graphics(virDomainPtr dom, guint idx, GError **error)
{
    int fd = virDomainOpenGraphicsFD(dom, idx, 0);

    if (fd < 0) {
        set_virt_error(error, "virDomainOpenGraphicsFD");
        return -1;
    }
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    return fd;
}

gboolean qs_virt_set_console_metadata(virDomainPtr dom,
                                      const QsConsoleMeta *meta,
                                      GError **error)
{
    g_autofree char *xml = NULL;
    unsigned int flags = 0;
    int active = virDomainIsActive(dom);
    int persistent = virDomainIsPersistent(dom);
    gboolean autostart = meta && meta->autostart;

    if (active == 1) {
        flags |= VIR_DOMAIN_AFFECT_LIVE;
    }
    if (persistent == 1) {
        flags |= VIR_DOMAIN_AFFECT_CONFIG;
    }
    if (!flags) {
        return TRUE;  /* a transient domain that has gone: nothing to update */
    }
    if (meta && (meta->host || autostart)) {
        xml = qs_console_metadata_xml(meta);
    }
    /* Also the persistent definition, as asked of us: a console's ports
     * there outlive a crash of the host, but every attach rewrites them and
     * every clean stop removes them. */
    if (virDomainSetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, xml,
                             xml ? QS_METADATA_PREFIX : NULL, QS_METADATA_URI,
                             flags) < 0) {
        set_virt_error(error, "virDomainSetMetadata");
        return FALSE;
    }
    return TRUE;
}
