/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control surface's operations on this helper's server and channels:
 * a new ticket, new certificates, the list of clients. */
#include "qs-helper-control.h"

#include "net/qs-ticket.h"

static gboolean set_ticket(const char *password, gsize len, gint64 expiry_us,
                           gboolean disconnect, guint *kept, gpointer data,
                           GError **error)
{
    QsHelperControl *hc = data;
    g_autoptr(QsTicket) ticket = qs_ticket_new(password, len, expiry_us,
                                               error);
    g_autoptr(GPtrArray) clients = NULL;
    guint dropped = 0;

    const QsTicket *view;

    if (!ticket) {
        return FALSE;
    }
    /* The control password would always win: the view one would be dead. */
    view = qs_server_get_view_ticket(hc->server);
    if (view && qs_ticket_same_password(ticket, view)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "the ticket must differ from the view-only ticket");
        return FALSE;
    }
    qs_server_set_ticket(hc->server, ticket);
    if (disconnect) {
        dropped = qs_channels_drop_clients(hc->channels,
                                           "the ticket changed");
    }
    clients = qs_channels_list_clients(hc->channels);
    *kept = clients->len;
    g_message("control: new ticket (%s); %u client(s) kept, %u dropped",
              expiry_us ? "with an expiry" : "no expiry", *kept, dropped);
    return TRUE;
}

static gboolean set_view_ticket(const char *password, gsize len, gint64 expiry_us,
                                gpointer data, GError **error)
{
    QsHelperControl *hc = data;
    g_autoptr(QsTicket) ticket = NULL;
    const QsTicket *control;

    if (!qs_server_auth_enabled(hc->server)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "ticketing is disabled: every client has control, a "
                    "view-only ticket would mean nothing");
        return FALSE;
    }
    if (len > 0) {
        if (!(ticket = qs_ticket_new(password, len, expiry_us, error))) {
            return FALSE;
        }
        control = qs_server_get_ticket(hc->server);
        if (control && qs_ticket_same_password(ticket, control)) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                        "the view-only ticket must differ from the ticket");
            return FALSE;
        }
    }
    qs_server_set_view_ticket(hc->server, ticket);
    g_message("control: %s", !ticket ? "view-only ticket removed"
                             : expiry_us ? "new view-only ticket (with an expiry)"
                                         : "new view-only ticket (no expiry)");
    return TRUE;
}

static gboolean set_token_keys(const char *text, gsize len, gpointer data, GError **error)
{
    QsHelperControl *hc = data;

    if (!qs_server_set_token_keys(hc->server, text, len, error)) {
        return FALSE;
    }
    g_message("control: new token keys");
    return TRUE;
}

static gboolean add_client(int fd, gboolean skip_auth, gboolean tls, gpointer data,
                           GError **error)
{
    QsHelperControl *hc = data;
    g_autofree char *peer = NULL;

    if (!(peer = qs_server_add_client(hc->server, fd, skip_auth, tls, error))) {
        return FALSE;
    }
    g_message("control: client socket %s added (%s%s)", peer, tls ? "TLS" : "plain",
              skip_auth ? ", no credential asked" : "");
    return TRUE;
}

static gboolean disconnect_client(const char *address, gpointer data, GError **error)
{
    QsHelperControl *hc = data;

    if (!qs_channels_drop_client(hc->channels, address, "disconnected by the operator")) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                    "no connected client is linked from '%s'", address);
        return FALSE;
    }
    g_message("control: client %s disconnected", address);
    return TRUE;
}

static gboolean set_certificates(const guint8 *cert, gsize cert_len,
                                 const guint8 *key, gsize key_len,
                                 gpointer data, GError **error)
{
    QsHelperControl *hc = data;

    if (!qs_server_set_tls_pem(hc->server, cert, cert_len, key, key_len,
                               error)) {
        return FALSE;
    }
    g_message("control: TLS certificates replaced (new links use them)");
    return TRUE;
}

static GVariant *list_clients(gpointer data)
{
    QsHelperControl *hc = data;
    g_autoptr(GPtrArray) clients = qs_channels_list_clients(hc->channels);
    GVariantBuilder b;

    g_variant_builder_init(&b, G_VARIANT_TYPE("aa{sv}"));
    for (guint i = 0; i < clients->len; i++) {
        QsClientInfo *c = clients->pdata[i];

        g_variant_builder_open(&b, G_VARIANT_TYPE_VARDICT);
        g_variant_builder_add(&b, "{sv}", "address",
                              g_variant_new_string(c->address));
        g_variant_builder_add(&b, "{sv}", "since",
            g_variant_new_int64(c->since_us / G_USEC_PER_SEC));
        g_variant_builder_add(&b, "{sv}", "tls", g_variant_new_boolean(c->tls));
        g_variant_builder_add(&b, "{sv}", "rights",
                              g_variant_new_string(c->view_only ? "view" : "control"));
        g_variant_builder_add(&b, "{sv}", "bytes", g_variant_new_uint64(c->bytes_sent));
        g_variant_builder_add(&b, "{sv}", "link-bps",
                              g_variant_new_uint64(c->link_bytes_per_sec * 8));
        g_variant_builder_add(&b, "{sv}", "rtt-us", g_variant_new_uint32(c->link_srtt_us));
        g_variant_builder_add(&b, "{sv}", "channels",
            g_variant_new_strv((const char *const *)c->channels, -1));
        g_variant_builder_close(&b);
    }
    return g_variant_builder_end(&b);
}

const QsControlOps *qs_helper_control_ops(void)
{
    static const QsControlOps ops = {
        .set_ticket = set_ticket,
        .set_view_ticket = set_view_ticket,
        .set_token_keys = set_token_keys,
        .add_client = add_client,
        .disconnect_client = disconnect_client,
        .set_certificates = set_certificates,
        .list_clients = list_clients,
    };

    return &ops;
}

QsControl *qs_helper_control_start(int control_fd, GDBusConnection *bus,
                                   QsHelperControl *hc, GError **error)
{
    g_autoptr(QsControl) control = qs_control_new(control_fd,
                                                  qs_helper_control_ops(),
                                                  hc, error);

    if (!control || (bus && !qs_control_serve_on_bus(control, bus, error))) {
        return NULL;
    }
    return g_steal_pointer(&control);
}
