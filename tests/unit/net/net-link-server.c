/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A test program: the real QsServer with the net options, accepting a main
 * channel and printing link events, for checks with real SPICE clients. */

#include <stdio.h>
#include <glib.h>
#include <glib-unix.h>
#include "net/qs-server.h"

static SpiceLinkErr on_prepare(const QsLinkInfo *info, guint32 *caps,
                               guint *n_caps, gpointer data)
{
    (void)data;
    (void)caps;
    *n_caps = 0;
    return info->channel_type == SPICE_CHANNEL_MAIN
               ? SPICE_LINK_ERR_OK
               : SPICE_LINK_ERR_CHANNEL_NOT_AVAILABLE;
}

static SpiceLinkErr on_authorize(const QsLinkInfo *info, guint32 *session_id,
                                 gpointer data)
{
    (void)data;
    if (info->connection_id != 0) {
        return SPICE_LINK_ERR_BAD_CONNECTION_ID;
    }
    *session_id = 0x1234;
    return SPICE_LINK_ERR_OK;
}

static void on_message(QsConn *conn, guint16 type, const guint8 *data,
                       guint32 size, gpointer user_data)
{
    (void)conn;
    (void)data;
    (void)user_data;
    printf("message %u size %u\n", type, size);
    fflush(stdout);
}

static void on_closed(QsConn *conn, const char *reason, gpointer user_data)
{
    (void)user_data;
    printf("closed: %s\n", reason);
    fflush(stdout);
    qs_conn_unref(conn);
}

static void on_attach(QsConn *conn, gpointer data)
{
    static const QsConnHandlers handlers = {
        .message = on_message,
        .closed = on_closed,
    };
    const QsLinkInfo *info = qs_conn_get_link_info(conn);

    (void)data;
    printf("linked channel %u common-caps %#x mini %d\n", info->channel_type,
           info->n_common_caps ? info->common_caps[0] : 0,
           qs_conn_has_common_cap(conn, SPICE_COMMON_CAP_MINI_HEADER));
    fflush(stdout);
    qs_conn_set_handlers(conn, &handlers, NULL, NULL);
}

static gboolean on_term(gpointer loop)
{
    g_main_loop_quit(loop);
    return G_SOURCE_REMOVE;
}

int main(int argc, char **argv)
{
    static const QsServerCallbacks callbacks = {
        .prepare = on_prepare,
        .authorize = on_authorize,
        .attach = on_attach,
    };
    QsNetConfig cfg;
    g_autoptr(GOptionContext) ctx = g_option_context_new("- net test server");
    g_autoptr(GError) error = NULL;
    g_autoptr(QsServer) server = NULL;
    g_autoptr(GMainLoop) loop = g_main_loop_new(NULL, FALSE);

    qs_net_config_init(&cfg);
    /* The two lines helper/main.c needs, plus the server. */
    g_option_context_add_group(ctx, qs_net_option_group(&cfg));
    if (!g_option_context_parse(ctx, &argc, &argv, &error) ||
        !qs_net_config_validate(&cfg, &error)) {
        fprintf(stderr, "net-link-server: %s\n", error->message);
        qs_net_config_clear(&cfg);
        return 2;
    }
    server = qs_server_new(&cfg, &callbacks, NULL, &error);
    if (!server) {
        fprintf(stderr, "net-link-server: %s\n", error->message);
        qs_net_config_clear(&cfg);
        return 1;
    }
    printf("port %u tls-port %u\n", qs_server_get_port(server, FALSE),
           qs_server_get_port(server, TRUE));
    fflush(stdout);
    g_unix_signal_add(SIGTERM, on_term, loop);
    g_unix_signal_add(SIGINT, on_term, loop);
    g_main_loop_run(loop);
    qs_net_config_clear(&cfg);
    return 0;
}
