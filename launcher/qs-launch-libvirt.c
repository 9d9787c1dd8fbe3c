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
    gboolean autostart = meta && meta->autostart;

    /* The live definition only: ports, pid and restarts describe this run of
     * the domain. In the persistent definition they would outlive a crash of
     * the host (a console reported that nothing serves) and every attach and
     * restart would rewrite the operator's configuration. The opt-in lives
     * there already, put by the operator; the live copy keeps it. */
    if (virDomainIsActive(dom) != 1) {
        return TRUE;  /* not running: there is no live definition to update */
    }
    if (meta && (meta->host || autostart)) {
        xml = qs_console_metadata_xml(meta);
    }
    if (virDomainSetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, xml,
                             xml ? QS_METADATA_PREFIX : NULL, QS_METADATA_URI,
                             VIR_DOMAIN_AFFECT_LIVE) < 0) {
        set_virt_error(error, "virDomainSetMetadata");
        return FALSE;
    }
    return TRUE;
}
