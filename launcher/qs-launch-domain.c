/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reads a domain's XML with GMarkup: only the few elements the launcher
 * decides on, with namespace prefixes resolved for our metadata element. */

#include <string.h>
#include <gio/gio.h>
#include "qs-launch-domain.h"

#define XML_MAX (16u << 20)

typedef struct {
    GPtrArray *stack;         /* element names from the root */
    char *name;
    char *uuid;
    int id;
    guint n_graphics;
    gboolean found_dbus;
    guint dbus_index;
    char *dbus_p2p;
    char *dbus_address;
    GString *other_graphics;  /* types of non-dbus graphics, for the error */
    gboolean autostart;
    GString *text;
    GPtrArray *ports;         /* QsDomainPort */
    GPtrArray *redirdevs;     /* QsDomainPort */
    QsDomainPort *smartcard;
    guint extra_smartcards;
    /* The <channel>, <redirdev> or <smartcard> being read: type='unix', its
     * source and target. */
    gboolean in_unix_channel;
    gboolean in_redirdev;
    gboolean in_smartcard;
    gboolean in_dac_seclabel;   /* <seclabel model='dac'> */
    gint64 qemu_uid, qemu_gid;
    char *chan_mode, *chan_path, *chan_target_type, *chan_target_name;
} Parse;

static const char *attr(const char **names, const char **values, const char *n)
{
    for (guint i = 0; names[i]; i++) {
        if (strcmp(names[i], n) == 0) {
            return values[i];
        }
    }
    return NULL;
}

static gboolean in_path(Parse *p, const char *a, const char *b)
{
    if (p->stack->len != (b ? 2u : 1u)) {
        return FALSE;
    }
    return strcmp(p->stack->pdata[0], a) == 0 &&
           (!b || strcmp(p->stack->pdata[1], b) == 0);
}

static void port_free(gpointer data)
{
    QsDomainPort *port = data;

    g_free(port->name);
    g_free(port->path);
    g_free(port);
}

static gboolean in_path3(Parse *p, const char *c)
{
    return p->stack->len == 3 && strcmp(p->stack->pdata[0], "domain") == 0 &&
           strcmp(p->stack->pdata[1], "devices") == 0 &&
           strcmp(p->stack->pdata[2], c) == 0;
}

/* A second <source> or <target> without the attribute the first lacked
 * is read again: what the first left is replaced, not lost. */
static void set_string(char **slot, const char *value)
{
    g_free(*slot);
    *slot = g_strdup(value);
}

/* <channel type='unix'><source mode= path=/><target type='virtio' name=/>,
 * <redirdev bus='usb' type='unix'><source mode= path=/>,
 * <smartcard mode='passthrough' type='unix'><source mode= path=/>. */
static void channel_start(Parse *p, const char *element, const char **names,
                          const char **values)
{
    const char *type = attr(names, values, "type");

    const char *bus = attr(names, values, "bus");

    if (in_path(p, "domain", "devices") && strcmp(element, "channel") == 0) {
        p->in_unix_channel = type && strcmp(type, "unix") == 0;
    } else if (in_path(p, "domain", "devices") && strcmp(element, "redirdev") == 0) {
        p->in_redirdev = type && strcmp(type, "unix") == 0 && (!bus || strcmp(bus, "usb") == 0);
    } else if (in_path(p, "domain", "devices") && strcmp(element, "smartcard") == 0) {
        const char *mode = attr(names, values, "mode");

        p->in_smartcard = type && strcmp(type, "unix") == 0 && mode &&
                          strcmp(mode, "passthrough") == 0;
    } else if (((p->in_redirdev && in_path3(p, "redirdev")) ||
                (p->in_smartcard && in_path3(p, "smartcard"))) &&
               strcmp(element, "source") == 0 && !p->chan_path) {
        set_string(&p->chan_mode, attr(names, values, "mode"));
        set_string(&p->chan_path, attr(names, values, "path"));
    } else if (p->in_unix_channel && in_path3(p, "channel") &&
               strcmp(element, "source") == 0 && !p->chan_path) {
        set_string(&p->chan_mode, attr(names, values, "mode"));
        set_string(&p->chan_path, attr(names, values, "path"));
    } else if (p->in_unix_channel && in_path3(p, "channel") &&
               strcmp(element, "target") == 0 && !p->chan_target_name) {
        set_string(&p->chan_target_type, type);
        set_string(&p->chan_target_name, attr(names, values, "name"));
    }
}

static void channel_end(Parse *p, const char *element)
{
    if (!in_path(p, "domain", "devices") ||
        (strcmp(element, "channel") != 0 && strcmp(element, "redirdev") != 0 &&
         strcmp(element, "smartcard") != 0)) {
        return;
    }
    if (p->in_smartcard && p->chan_path && !p->smartcard) {
        /* The first: the helper offers one reader. */
        p->smartcard = g_new0(QsDomainPort, 1);
        p->smartcard->name = g_strdup("smartcard");
        p->smartcard->path = g_steal_pointer(&p->chan_path);
        /* As for a redirdev, no mode is libvirt's connect. */
        p->smartcard->qemu_listens = p->chan_mode && strcmp(p->chan_mode, "bind") == 0;
    } else if (p->in_smartcard && p->chan_path) {
        p->extra_smartcards++;
    }
    p->in_smartcard = FALSE;
    if (p->in_redirdev && p->chan_path) {
        QsDomainPort *dev = g_new0(QsDomainPort, 1);

        dev->name = g_strdup_printf("usbredir.%u", p->redirdevs->len);
        dev->path = g_steal_pointer(&p->chan_path);
        /* Read as libvirt writes it; no mode is libvirt's connect. */
        dev->qemu_listens = p->chan_mode && strcmp(p->chan_mode, "bind") == 0;
        g_ptr_array_add(p->redirdevs, dev);
    }
    p->in_redirdev = FALSE;
    if (p->in_unix_channel && p->chan_path && p->chan_target_name &&
        p->chan_target_type && strcmp(p->chan_target_type, "virtio") == 0) {
        QsDomainPort *port = g_new0(QsDomainPort, 1);

        port->name = g_steal_pointer(&p->chan_target_name);
        port->path = g_steal_pointer(&p->chan_path);
        /* libvirt's default for a unix channel is bind. */
        port->qemu_listens = !p->chan_mode || strcmp(p->chan_mode, "bind") == 0;
        g_ptr_array_add(p->ports, port);
    }
    p->in_unix_channel = FALSE;
    g_clear_pointer(&p->chan_mode, g_free);
    g_clear_pointer(&p->chan_path, g_free);
    g_clear_pointer(&p->chan_target_type, g_free);
    g_clear_pointer(&p->chan_target_name, g_free);
}

/* The DAC label libvirt writes in the live XML, "+UID:+GID": the user
 * qemu runs as. Names (without '+') are not looked up: left unknown. */
static void dac_label(Parse *p, const char *text)
{
    g_autofree char *copy = g_strstrip(g_strdup(text));
    g_auto(GStrv) parts = g_strsplit(copy, ":", 2);
    guint64 uid, gid;

    if (g_strv_length(parts) == 2 && parts[0][0] == '+' && parts[1][0] == '+' &&
        g_ascii_string_to_unsigned(parts[0] + 1, 10, 0, G_MAXUINT32 - 1, &uid, NULL) &&
        g_ascii_string_to_unsigned(parts[1] + 1, 10, 0, G_MAXUINT32 - 1, &gid, NULL)) {
        p->qemu_uid = (gint64)uid;
        p->qemu_gid = (gint64)gid;
    }
}

/* Our element in <metadata>: <P:console xmlns:P=URI> or <console xmlns=URI>. */
static gboolean is_our_element(const char *element, const char **names,
                               const char **values)
{
    const char *colon = strchr(element, ':');
    g_autofree char *decl = NULL;
    const char *uri;

    if (colon) {
        decl = g_strdup_printf("xmlns:%.*s", (int)(colon - element), element);
        element = colon + 1;
    } else {
        decl = g_strdup("xmlns");
    }
    uri = attr(names, values, decl);
    return strcmp(element, "console") == 0 && uri &&
           strcmp(uri, QS_METADATA_URI) == 0;
}

static void on_start(GMarkupParseContext *ctx, const char *element,
                     const char **names, const char **values, gpointer data,
                     GError **error)
{
    Parse *p = data;

    (void)ctx;
    (void)error;
    if (p->stack->len == 0 && strcmp(element, "domain") == 0) {
        const char *id = attr(names, values, "id");

        p->id = id ? (int)g_ascii_strtoll(id, NULL, 10) : -1;
    }
    if (in_path(p, "domain", "devices") && strcmp(element, "graphics") == 0) {
        const char *type = attr(names, values, "type");

        if (type && strcmp(type, "dbus") == 0 && !p->found_dbus) {
            p->found_dbus = TRUE;
            p->dbus_index = p->n_graphics;
            p->dbus_p2p = g_strdup(attr(names, values, "p2p"));
            p->dbus_address = g_strdup(attr(names, values, "address"));
        } else if (type && strcmp(type, "dbus") != 0) {
            g_string_append_printf(p->other_graphics, "%s%s",
                                   p->other_graphics->len ? ", " : "", type);
        }
        p->n_graphics++;
    }
    if (in_path(p, "domain", "metadata") &&
        is_our_element(element, names, values)) {
        const char *a = attr(names, values, "autostart");

        p->autostart = a && (strcmp(a, "yes") == 0 || strcmp(a, "true") == 0);
    }
    if (in_path(p, "domain", NULL) && strcmp(element, "seclabel") == 0) {
        const char *model = attr(names, values, "model");

        p->in_dac_seclabel = model && strcmp(model, "dac") == 0;
    }
    channel_start(p, element, names, values);
    g_ptr_array_add(p->stack, g_strdup(element));
    g_string_truncate(p->text, 0);
}

static void on_end(GMarkupParseContext *ctx, const char *element,
                   gpointer data, GError **error)
{
    Parse *p = data;

    (void)ctx;
    (void)error;
    g_ptr_array_remove_index(p->stack, p->stack->len - 1);
    channel_end(p, element);
    if (p->in_dac_seclabel && in_path(p, "domain", "seclabel") &&
        strcmp(element, "label") == 0) {
        dac_label(p, p->text->str);
    }
    if (in_path(p, "domain", NULL)) {
        if (strcmp(element, "name") == 0 && !p->name) {
            p->name = g_strstrip(g_strdup(p->text->str));
        } else if (strcmp(element, "uuid") == 0 && !p->uuid) {
            p->uuid = g_strstrip(g_strdup(p->text->str));
        }
    }
    g_string_truncate(p->text, 0);
}

static void on_text(GMarkupParseContext *ctx, const char *text, gsize len,
                    gpointer data, GError **error)
{
    Parse *p = data;

    (void)ctx;
    (void)error;
    if (p->text->len + len < 4096) {
        g_string_append_len(p->text, text, (gssize)len);
    }
}

static const GMarkupParser parser = { on_start, on_end, on_text, NULL, NULL };

static void parse_clear(Parse *p)
{
    g_ptr_array_unref(p->stack);
    g_free(p->name);
    g_free(p->uuid);
    g_free(p->dbus_p2p);
    g_free(p->dbus_address);
    g_string_free(p->other_graphics, TRUE);
    g_string_free(p->text, TRUE);
    g_ptr_array_unref(p->ports);
    g_ptr_array_unref(p->redirdevs);
    if (p->smartcard) {
        port_free(p->smartcard);
    }
    g_free(p->chan_mode);
    g_free(p->chan_path);
    g_free(p->chan_target_type);
    g_free(p->chan_target_name);
}

static gboolean run_parser(Parse *p, const char *xml, GError **error)
{
    g_autoptr(GMarkupParseContext) ctx = NULL;
    gsize len = strlen(xml);

    memset(p, 0, sizeof(*p));
    p->stack = g_ptr_array_new_with_free_func(g_free);
    p->other_graphics = g_string_new(NULL);
    p->text = g_string_new(NULL);
    p->ports = g_ptr_array_new_with_free_func(port_free);
    p->qemu_uid = p->qemu_gid = -1;
    p->redirdevs = g_ptr_array_new_with_free_func(port_free);
    p->id = -1;
    if (len > XML_MAX) {
        g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_PARSE,
                    "domain XML larger than %u bytes", XML_MAX);
        return FALSE;
    }
    ctx = g_markup_parse_context_new(&parser, G_MARKUP_PREFIX_ERROR_POSITION,
                                     p, NULL);
    if (!g_markup_parse_context_parse(ctx, xml, (gssize)len, error) ||
        !g_markup_parse_context_end_parse(ctx, error)) {
        g_prefix_error(error, "domain XML: ");
        return FALSE;
    }
    if (!p->name) {
        g_set_error(error, G_MARKUP_ERROR, G_MARKUP_ERROR_INVALID_CONTENT,
                    "domain XML: no <domain><name>");
        return FALSE;
    }
    return TRUE;
}

static gboolean is_yes(const char *v)
{
    return v && (strcmp(v, "yes") == 0 || strcmp(v, "on") == 0);
}

QsDomainInfo *qs_domain_info_parse(const char *xml, GError **error)
{
    Parse p;
    g_autoptr(QsDomainInfo) info = g_new0(QsDomainInfo, 1);
    const char *need = "add <graphics type='dbus' p2p='yes'/> (or <graphics "
                       "type='dbus'/> for libvirt's per-VM bus) to its "
                       "<devices>";

    if (!run_parser(&p, xml, error)) {
        parse_clear(&p);
        return NULL;
    }
    info->name = g_steal_pointer(&p.name);
    info->uuid = g_steal_pointer(&p.uuid);
    info->id = p.id;
    info->autostart = p.autostart;
    info->graphics_index = p.dbus_index;
    info->ports = g_steal_pointer(&p.ports);
    p.ports = g_ptr_array_new();
    info->redirdevs = g_steal_pointer(&p.redirdevs);
    info->qemu_uid = p.qemu_uid;
    info->qemu_gid = p.qemu_gid;
    p.redirdevs = g_ptr_array_new();
    info->smartcard = g_steal_pointer(&p.smartcard);
    info->extra_smartcards = p.extra_smartcards;
    if (!p.found_dbus) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                    "domain '%s' has no D-Bus display%s%s%s: %s", info->name,
                    p.other_graphics->len ? " (only " : "",
                    p.other_graphics->str,
                    p.other_graphics->len ? " graphics)" : "", need);
    } else if (is_yes(p.dbus_p2p)) {
        info->mode = QS_DISPLAY_P2P;
    } else if (p.dbus_address &&
               g_str_has_prefix(p.dbus_address, "unix:path=") &&
               !strchr(p.dbus_address, ',') &&
               g_path_is_absolute(p.dbus_address + strlen("unix:path="))) {
        info->mode = QS_DISPLAY_BUS;
        info->bus_address = g_strdup(p.dbus_address);
        info->bus_path = g_strdup(p.dbus_address + strlen("unix:path="));
    } else if (p.dbus_address) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                    "domain '%s': D-Bus display address '%s' is not "
                    "'unix:path=/absolute/path' (only unix sockets are "
                    "supported)", info->name, p.dbus_address);
    } else if (info->id < 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_CONNECTED,
                    "domain '%s' is not running (its D-Bus bus address "
                    "exists only while it runs)", info->name);
    } else {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                    "domain '%s': <graphics type='dbus'> has neither "
                    "p2p='yes' nor a bus address: %s", info->name, need);
    }
    parse_clear(&p);
    return error && *error ? NULL : g_steal_pointer(&info);
}

gboolean qs_domain_xml_opts_in(const char *xml, char **name, GError **error)
{
    Parse p;
    gboolean ret = FALSE;

    if (run_parser(&p, xml, error)) {
        ret = p.autostart;
        if (name) {
            *name = g_steal_pointer(&p.name);
        }
    }
    parse_clear(&p);
    return ret;
}

char *qs_domain_xml_uuid(const char *xml)
{
    Parse p;
    char *uuid = NULL;

    if (run_parser(&p, xml, NULL)) {
        uuid = g_steal_pointer(&p.uuid);
    }
    parse_clear(&p);
    return uuid;
}

void qs_domain_info_free(QsDomainInfo *info)
{
    if (!info) {
        return;
    }
    g_free(info->name);
    g_free(info->uuid);
    g_free(info->bus_address);
    g_free(info->bus_path);
    if (info->ports) {
        g_ptr_array_unref(info->ports);
    }
    if (info->redirdevs) {
        g_ptr_array_unref(info->redirdevs);
    }
    if (info->smartcard) {
        port_free(info->smartcard);
    }
    g_free(info);
}

gboolean qs_domain_port_usable(const QsDomainPort *port, const char **why)
{
    if (strcmp(port->name, "org.qemu.guest_agent.0") == 0) {
        *why = "it is qemu-guest-agent's, which libvirt itself connects to";
    } else if (!port->name[0] || strlen(port->name) > 127 ||
               strspn(port->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                  "0123456789._-") != strlen(port->name)) {
        *why = "the helper takes port names of letters, digits, '.', '_' and "
               "'-', at most 127";
    } else if (!port->qemu_listens) {
        *why = "qemu connects out to it (mode='connect'); the launcher "
               "connects only to sockets qemu listens on (mode='bind')";
    } else {
        *why = NULL;
        return TRUE;
    }
    return FALSE;
}

char *qs_console_metadata_xml(const QsConsoleMeta *m)
{
    GString *s = g_string_new("<console");

    if (m->autostart) {
        g_string_append(s, " autostart='yes'");
    }
    if (m->host) {
        g_autofree char *host = g_markup_escape_text(m->host, -1);
        g_autofree char *tf = g_markup_escape_text(m->ticket_file ? m->ticket_file : "", -1);

        g_string_append_printf(s, " type='spice' host='%s'", host);
        if (m->port) {
            g_string_append_printf(s, " port='%u'", m->port);
        }
        if (m->tls_port) {
            g_string_append_printf(s, " tls-port='%u'", m->tls_port);
        }
        if (m->ticket_file) {
            g_string_append_printf(s, " ticket-file='%s'", tf);
        }
        if (m->ticket_expiry) {
            g_string_append_printf(s, " ticket-expiry='%" G_GINT64_FORMAT "'",
                                   m->ticket_expiry);
        } else {
            g_string_append(s, " ticket-expiry='never'");
        }
        g_string_append_printf(s, " pid='%d' restarts='%u' started='%"
                               G_GINT64_FORMAT "'", m->pid, m->restarts,
                               m->started);
    }
    g_string_append(s, "/>");
    return g_string_free(s, FALSE);
}

gboolean qs_domain_redirdev_usable(const QsDomainPort *redirdev, const char **why)
{
    if (redirdev->qemu_listens) {
        *why = "qemu listens on its socket (mode='bind'): qemu's usb-redir says "
               "hello once per connection, so each client needs qemu to connect "
               "anew; use <source mode='connect' path=...> with <reconnect "
               "enabled='yes' timeout='1'/>";
        return FALSE;
    }
    *why = NULL;
    return TRUE;
}
