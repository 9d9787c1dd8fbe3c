/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Formats a running console for its consumers: scripts (JSON), virt-viewer
 * (URI, .vv), Kerbside's static console source (YAML) and browsers (a link
 * to the helper's console page). */

#include <string.h>
#include <gio/gio.h>
#include "qs-launch-format.h"
#include "qs-launch-json.h"

gboolean qs_console_format_parse(const char *name, QsConsoleFormat *out,
                                 GError **error)
{
    static const char *const names[] = { "uri", "json", "vv", "kerbside", "url" };

    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        if (strcmp(name, names[i]) == 0) {
            *out = (QsConsoleFormat)i;
            return TRUE;
        }
    }
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "unknown format '%s' (uri, json, vv, kerbside, url)", name);
    return FALSE;
}

static char *host_for_uri(const char *host)
{
    return strchr(host, ':') ? g_strdup_printf("[%s]", host) : g_strdup(host);
}

static char *format_uri(const QsConsoleInfo *c)
{
    const QsLaunchState *st = c->state;
    g_autofree char *host = host_for_uri(st->host);
    GString *s = g_string_new("spice://");
    char sep = '?';

    g_string_append(s, host);
    if (st->port) {
        g_string_append_printf(s, ":%u", st->port);
    }
    if (st->tls_port) {
        g_string_append_printf(s, "%ctls-port=%u", sep, st->tls_port);
        sep = '&';
    }
    if (c->password) {
        g_autofree char *pw = g_uri_escape_string(c->password, NULL, FALSE);

        g_string_append_printf(s, "%cpassword=%s", sep, pw);
    }
    g_string_append_c(s, '\n');
    return g_string_free(s, FALSE);
}

static char *format_json(const QsConsoleInfo *c)
{
    const QsLaunchState *st = c->state;
    g_autoptr(JsonBuilder) b = json_builder_new();

    json_builder_begin_object(b);
    qs_json_member_string(b, "type", "spice");
    qs_json_member_string(b, "domain", st->domain);
    qs_json_member_string(b, "uuid", st->uuid);
    qs_json_member_string(b, "host", st->host);
    qs_json_member_int_or_null(b, "port", st->port);
    qs_json_member_int_or_null(b, "tls_port", st->tls_port);
    qs_json_member_string(b, "password", c->password);
    qs_json_member_int_or_null(b, "ticket_expiry", st->ticket_expiry);
    qs_json_member_string(b, "ticket_file", st->ticket_file);
    qs_json_member_string(b, "host_subject", c->host_subject);
    qs_json_member_int(b, "pid", st->helper_pid);
    qs_json_member_int(b, "restarts", st->restarts);
    json_builder_end_object(b);
    return qs_json_line(b);
}

/* Every channel spice-gtk names: a TLS console's .vv asks for TLS on all. */
static const char *const all_channels[] = {
    "main", "display", "inputs", "cursor", "playback", "record", "smartcard",
    "usbredir", "port", "webdav",
};

/* remote-viewer reads the file with GKeyFile: GKeyFile writes it (the CA's
 * newlines and any other character escaped as it reads them back). No
 * delete-this-file: a .vv may be opened again (a single-use token in it
 * then says "used" in remote-viewer's error, a ticket works). */
static char *format_vv(const QsConsoleInfo *c)
{
    const QsLaunchState *st = c->state;
    g_autoptr(GKeyFile) kf = g_key_file_new();
    const char *g = "virt-viewer";
    g_autofree char *ca = c->ca_cert ? g_strstrip(g_strdup(c->ca_cert)) : NULL;

    g_key_file_set_string(kf, g, "type", "spice");
    g_key_file_set_string(kf, g, "host", st->host);
    if (st->tls_port) {
        g_key_file_set_integer(kf, g, "tls-port", st->tls_port);
        g_key_file_set_string_list(kf, g, "secure-channels", all_channels,
                                   G_N_ELEMENTS(all_channels));
        if (ca) {
            g_key_file_set_string(kf, g, "ca", ca);
        }
        if (c->host_subject) {
            g_key_file_set_string(kf, g, "host-subject", c->host_subject);
        }
    } else if (st->port) {
        g_key_file_set_integer(kf, g, "port", st->port);
    }
    if (c->password) {
        g_key_file_set_string(kf, g, "password", c->password);
    }
    g_key_file_set_string(kf, g, "title", st->domain);
    return g_key_file_to_data(kf, NULL, NULL);
}

/* The helper's console page with the token after '#', which a browser
 * never sends: the TLS port when there is one (https, wss). */
static char *format_url(const QsConsoleInfo *c, GError **error)
{
    const QsLaunchState *st = c->state;
    g_autofree char *host = host_for_uri(st->host);

    if (!c->password) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                    "a link carries a token, and '%s' has none", st->domain);
        return NULL;
    }
    return g_strdup_printf("%s://%s:%u/#%s\n", st->tls_port ? "https" : "http", host,
                           st->tls_port ? st->tls_port : st->port, c->password);
}

static void yaml_kv(GString *s, const char *key, const char *v)
{
    /* A JSON string is a valid YAML scalar. */
    g_autofree char *quoted = qs_json_quote(v);

    g_string_append_printf(s, "%s%s: %s\n", key[0] == '-' ? "  " : "    ", key, quoted);
}

static char *format_kerbside(const QsConsoleInfo *c, GError **error)
{
    const QsLaunchState *st = c->state;
    GString *s;

    if (!st->port) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                    "Kerbside's static source needs an insecure_port: the "
                    "console has only a TLS port (set [listen] plain=true)");
        return NULL;
    }
    if (!c->hypervisor_ip) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                    "Kerbside's hypervisor_ip needs an address for '%s'",
                    st->host);
        return NULL;
    }
    s = g_string_new("consoles:\n");
    yaml_kv(s, "- uuid", st->uuid ? st->uuid : "");
    yaml_kv(s, "name", st->domain);
    yaml_kv(s, "hypervisor", c->hypervisor ? c->hypervisor : st->host);
    if (c->hypervisor_ip_from) {
        /* a YAML comment: Kerbside reads past it */
        g_string_append_printf(s, "    # hypervisor_ip: %s\n",
                               c->hypervisor_ip_from);
    }
    yaml_kv(s, "hypervisor_ip", c->hypervisor_ip);
    g_string_append_printf(s, "    insecure_port: %u\n", st->port);
    if (st->tls_port) {
        g_string_append_printf(s, "    secure_port: %u\n", st->tls_port);
    }
    if (c->host_subject && st->tls_port) {
        yaml_kv(s, "host_subject", c->host_subject);
    }
    yaml_kv(s, "ticket", c->password ? c->password : "");
    return g_string_free(s, FALSE);
}

char *qs_console_format(const QsConsoleInfo *info, QsConsoleFormat fmt,
                        GError **error)
{
    switch (fmt) {
    case QS_FORMAT_URI:
        return format_uri(info);
    case QS_FORMAT_JSON:
        return format_json(info);
    case QS_FORMAT_VV:
        return format_vv(info);
    case QS_FORMAT_KERBSIDE:
        return format_kerbside(info, error);
    case QS_FORMAT_URL:
        return format_url(info, error);
    }
    g_assert_not_reached();
}
