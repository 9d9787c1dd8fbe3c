/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qs_server_add_client: client sockets handed in (AddClient) go through the
 * link stage as accepted ones do, with or without a credential, plain or
 * TLS, bounded as one source; what is not a connected stream socket is
 * refused with why. The real QsServer on its own thread, blocking test
 * clients on the other ends. */

#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include "net/qs-link.h"
#include "net/qs-server.h"
#include "net/qs-ticket.h"
#include "net-test-client.h"

#define PASSWORD "s3cret-pw"
#define SESSION_ID 0x5eed1234u
#define MSG_ECHO 200

typedef struct {
    QsNetConfig cfg;
    GMainContext *ctx;
    GMainLoop *loop;
    GThread *thread;
    QsServer *server;
    GMutex lock;
    GCond cond;
    gboolean ready;
    GPtrArray *conns;           /* server thread only */
    guint control_links, view_links;    /* under lock */
    char *tls_dir;
} Fixture;

/* One qs_server_add_client, run on the server's thread. */
typedef struct {
    Fixture *f;
    int fd;
    gboolean skip_auth, tls;
    char *peer;
    GError *error;
    gboolean done;
} AddCall;

static SpiceLinkErr cb_prepare(const QsLinkInfo *info, guint32 *caps, guint *n_caps,
                               gpointer data)
{
    (void)caps, (void)data;
    *n_caps = 0;
    return info->channel_type == SPICE_CHANNEL_MAIN ? SPICE_LINK_ERR_OK
                                                    : SPICE_LINK_ERR_CHANNEL_NOT_AVAILABLE;
}

static SpiceLinkErr cb_authorize(const QsLinkInfo *info, guint32 *session_id, gpointer data)
{
    (void)info, (void)data;
    *session_id = SESSION_ID;
    return SPICE_LINK_ERR_OK;
}

static void on_message(QsConn *conn, guint16 type, const guint8 *data, guint32 size,
                       gpointer user_data)
{
    (void)user_data;
    qs_conn_send(conn, type, g_bytes_new(data, size));
}

static void on_closed(QsConn *conn, const char *reason, gpointer user_data)
{
    (void)reason;
    g_ptr_array_remove(((Fixture *)user_data)->conns, conn);
}

static void cb_attach(QsConn *conn, gpointer data)
{
    static const QsConnHandlers handlers = { .message = on_message, .closed = on_closed };
    Fixture *f = data;

    g_mutex_lock(&f->lock);
    if (qs_conn_get_link_info(conn)->view_only) {
        f->view_links++;
    } else {
        f->control_links++;
    }
    g_mutex_unlock(&f->lock);
    qs_conn_set_handlers(conn, &handlers, f, NULL);
    g_ptr_array_add(f->conns, conn);
}

static const QsServerCallbacks callbacks = {
    .prepare = cb_prepare, .authorize = cb_authorize, .attach = cb_attach,
};

static gpointer server_thread(gpointer data)
{
    Fixture *f = data;
    g_autoptr(GError) error = NULL;

    g_main_context_push_thread_default(f->ctx);
    f->conns = g_ptr_array_new_with_free_func((GDestroyNotify)qs_conn_unref);
    f->server = qs_server_new(&f->cfg, &callbacks, f, &error);
    g_assert_no_error(error);
    g_mutex_lock(&f->lock);
    f->ready = TRUE;
    g_cond_signal(&f->cond);
    g_mutex_unlock(&f->lock);
    g_main_loop_run(f->loop);
    while (f->conns->len) {
        qs_conn_close(f->conns->pdata[0], "test over");
        while (g_main_context_iteration(f->ctx, FALSE)) {
        }
    }
    g_ptr_array_unref(f->conns);
    qs_server_free(f->server);
    while (g_main_context_iteration(f->ctx, FALSE)) {
    }
    g_main_context_pop_thread_default(f->ctx);
    return NULL;
}


static Fixture *fixture_start(gboolean tls, int max_per_source)
{
    Fixture *f = g_new0(Fixture, 1);

    qs_net_config_init(&f->cfg);
    f->cfg.listen = g_strdup("127.0.0.1:0");
    f->cfg.ticket = qs_ticket_new(PASSWORD, strlen(PASSWORD), 0, NULL);
    f->cfg.auth_fail_delay_ms = 10;
    if (max_per_source) {
        f->cfg.max_pending_per_source = max_per_source;
    }
    if (tls) {
        f->tls_dir = net_test_make_tls_dir();
        g_assert_nonnull(f->tls_dir);
        f->cfg.tls_listen = g_strdup("127.0.0.1:0");
        f->cfg.tls_dir = g_strdup(f->tls_dir);
    }
    g_mutex_init(&f->lock);
    g_cond_init(&f->cond);
    f->ctx = g_main_context_new();
    f->loop = g_main_loop_new(f->ctx, FALSE);
    f->thread = g_thread_new("qs-net-server", server_thread, f);
    g_mutex_lock(&f->lock);
    while (!f->ready) {
        g_cond_wait(&f->cond, &f->lock);
    }
    g_mutex_unlock(&f->lock);
    return f;
}

static gboolean quit_cb(gpointer data)
{
    g_main_loop_quit(data);
    return G_SOURCE_REMOVE;
}

static void fixture_stop(Fixture *f)
{
    g_main_context_invoke(f->ctx, quit_cb, f->loop);
    g_thread_join(f->thread);
    g_main_loop_unref(f->loop);
    g_main_context_unref(f->ctx);
    qs_net_config_clear(&f->cfg);
    if (f->tls_dir) {
        net_test_remove_tls_dir(f->tls_dir);
        g_free(f->tls_dir);
    }
    g_mutex_clear(&f->lock);
    g_cond_clear(&f->cond);
    g_free(f);
}

static gboolean add_in_server(gpointer data)
{
    AddCall *a = data;

    a->peer = qs_server_add_client(a->f->server, a->fd, a->skip_auth, a->tls, &a->error);
    g_mutex_lock(&a->f->lock);
    a->done = TRUE;
    g_cond_broadcast(&a->f->cond);
    g_mutex_unlock(&a->f->lock);
    return G_SOURCE_REMOVE;
}

/* Hands `fd` in; returns the peer name or NULL with *error. */
static char *add_client(Fixture *f, int fd, gboolean skip_auth, gboolean tls, GError **error)
{
    AddCall a = { f, fd, skip_auth, tls, NULL, NULL, FALSE };

    g_main_context_invoke(f->ctx, add_in_server, &a);
    g_mutex_lock(&f->lock);
    while (!a.done) {
        g_cond_wait(&f->cond, &f->lock);
    }
    g_mutex_unlock(&f->lock);
    if (a.error) {
        g_propagate_error(error, a.error);
    }
    return a.peer;
}

/* A socket pair: the server gets [1], the returned client [0]. */
static NetTestClient *added(Fixture *f, gboolean skip_auth, gboolean tls, char **peer)
{
    g_autoptr(GError) error = NULL;
    int sv[2];
    char *name;

    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
    name = add_client(f, sv[1], skip_auth, tls, &error);
    g_assert_no_error(error);
    if (peer) {
        *peer = name;
    } else {
        g_free(name);
    }
    return net_test_client_new_from_fd(sv[0], tls);
}

static void assert_echo(NetTestClient *c)
{
    g_autofree guint8 *body = NULL;
    guint16 type;
    guint32 size;

    g_assert_true(net_test_client_send_msg(c, MSG_ECHO, "hi", 2));
    body = net_test_client_recv_msg(c, &type, &size);
    g_assert_nonnull(body);
    g_assert_cmpuint(type, ==, MSG_ECHO);
    g_assert_cmpmem(body, size, "hi", 2);
}

/* Without skip_auth the ticket is checked as on the listener. */
static void test_ticket(void)
{
    Fixture *f = fixture_start(FALSE, 0);
    g_autofree char *peer = NULL, *peer2 = NULL;
    NetTestClient *c = added(f, FALSE, FALSE, &peer);

    g_assert_cmpstr(peer, ==, "local:1");
    g_assert_cmpint(net_test_client_link(c, 0, SPICE_CHANNEL_MAIN, PASSWORD), ==,
                    SPICE_LINK_ERR_OK);
    assert_echo(c);
    net_test_client_free(c);
    c = added(f, FALSE, FALSE, &peer2);
    g_assert_cmpstr(peer2, ==, "local:2");
    g_assert_cmpint(net_test_client_link(c, 0, SPICE_CHANNEL_MAIN, "wrong"), ==,
                    SPICE_LINK_ERR_PERMISSION_DENIED);
    g_assert_true(net_test_client_wait_eof(c, 2000));
    net_test_client_free(c);
    fixture_stop(f);
}

/* skip_auth: any ticket field links, with control rights. */
static void test_skip_auth(void)
{
    Fixture *f = fixture_start(FALSE, 0);
    NetTestClient *c = added(f, TRUE, FALSE, NULL);

    g_assert_cmpint(net_test_client_link(c, 0, SPICE_CHANNEL_MAIN, "not the ticket"), ==,
                    SPICE_LINK_ERR_OK);
    assert_echo(c);
    g_mutex_lock(&f->lock);
    g_assert_cmpuint(f->control_links, ==, 1);
    g_assert_cmpuint(f->view_links, ==, 0);
    g_mutex_unlock(&f->lock);
    net_test_client_free(c);
    fixture_stop(f);
}

/* tls: the handshake first, with the TLS listener's certificate; without
 * a TLS listener, refused (NOT_SUPPORTED) and the socket closed. */
static void test_tls(void)
{
    g_autoptr(GError) error = NULL;
    Fixture *f = fixture_start(TRUE, 0);
    NetTestClient *c = added(f, FALSE, TRUE, NULL);
    int sv[2];
    char byte;

    g_assert_nonnull(c);
    g_assert_cmpint(net_test_client_link(c, 0, SPICE_CHANNEL_MAIN, PASSWORD), ==,
                    SPICE_LINK_ERR_OK);
    assert_echo(c);
    net_test_client_free(c);
    fixture_stop(f);

    f = fixture_start(FALSE, 0);
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
    g_assert_null(add_client(f, sv[1], FALSE, TRUE, &error));
    g_assert_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
    g_assert_nonnull(strstr(error->message, "no TLS listener"));
    g_assert_cmpint(read(sv[0], &byte, 1), ==, 0);      /* closed */
    close(sv[0]);
    fixture_stop(f);
}

static void assert_refused(Fixture *f, int fd, const char *why)
{
    g_autoptr(GError) error = NULL;

    g_assert_null(add_client(f, fd, FALSE, FALSE, &error));
    g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull(strstr(error->message, why));
    g_assert_cmpint(fcntl(fd, F_GETFD), <, 0);          /* taken and closed */
}

static void test_bad_descriptors(void)
{
    Fixture *f = fixture_start(FALSE, 0);
    int p[2], d[2], l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int lone = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    g_assert_cmpint(pipe(p), ==, 0);
    assert_refused(f, p[0], "not a socket");
    close(p[1]);
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, d), ==, 0);
    assert_refused(f, d[0], "not a stream socket");
    close(d[1]);
    g_assert_cmpint(bind(l, (struct sockaddr *)&(struct sockaddr_un){ .sun_family = AF_UNIX },
                         sizeof(sa_family_t)), ==, 0);
    g_assert_cmpint(listen(l, 1), ==, 0);
    assert_refused(f, l, "listening socket");
    assert_refused(f, lone, "not connected");
    fixture_stop(f);
}

/* The added sockets are one source: past its bound the oldest of them is
 * dropped, while a listener's link from elsewhere goes on. */
static void test_bounded(void)
{
    Fixture *f = fixture_start(FALSE, 2);
    NetTestClient *tcp = net_test_client_connect(qs_server_get_port(f->server, FALSE), FALSE);
    NetTestClient *a = added(f, FALSE, FALSE, NULL);
    NetTestClient *b = added(f, FALSE, FALSE, NULL);
    NetTestClient *c = added(f, FALSE, FALSE, NULL);

    g_assert_true(net_test_client_wait_eof(a, 2000));
    g_assert_cmpint(net_test_client_link(b, 0, SPICE_CHANNEL_MAIN, PASSWORD), ==,
                    SPICE_LINK_ERR_OK);
    g_assert_cmpint(net_test_client_link(c, 0, SPICE_CHANNEL_MAIN, PASSWORD), ==,
                    SPICE_LINK_ERR_OK);
    g_assert_cmpint(net_test_client_link(tcp, 0, SPICE_CHANNEL_MAIN, PASSWORD), ==,
                    SPICE_LINK_ERR_OK);
    net_test_client_free(a);
    net_test_client_free(b);
    net_test_client_free(c);
    net_test_client_free(tcp);
    fixture_stop(f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/net/add-client/ticket", test_ticket);
    g_test_add_func("/net/add-client/skip-auth", test_skip_auth);
    g_test_add_func("/net/add-client/tls", test_tls);
    g_test_add_func("/net/add-client/bad-descriptors", test_bad_descriptors);
    g_test_add_func("/net/add-client/bounded", test_bounded);
    return g_test_run();
}
