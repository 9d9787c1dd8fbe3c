/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The agent with display's QsClipboard against a fake qemu clipboard over peer-to-peer D-Bus. */
#include "channels/qs-agent-channel.h"
#include "channels/qs-agent-clipboard.h"
#include "wire/qs-agent.h"
#include "channels/qs-channels.h"
#include "wire/qs-wire.h"
#include "fake-peers.h"
#include "qs-dbus-display1.h"

#include <spice/enums.h>
#include <spice/protocol.h>
#include <spice/vd_agent.h>
#include <string.h>
#include <sys/socket.h>

#define PATH "/org/qemu/Display1/Clipboard"
#define MIME "text/plain;charset=utf-8"

/*
 * The fake qemu runs on its own thread and main context, as qemu does
 * beside us: its Register handler reads our object back synchronously before
 * it replies (ui/dbus-clipboard.c), and its Request to us is synchronous.
 */
typedef struct {
    GThread *thread;
    GMainContext *ctx;
    GMainLoop *loop;
    GSocket *socket;
    GDBusConnection *conn;
    QemuDBusDisplay1Clipboard *skel;
    GMutex lock;
    GString *log;
    GCond ready;
} FakeQemu;

static void fq_log(FakeQemu *fq, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static void fq_log(FakeQemu *fq, const char *fmt, ...)
{
    va_list ap;

    g_mutex_lock(&fq->lock);
    va_start(ap, fmt);
    g_string_append_vprintf(fq->log, fmt, ap);
    va_end(ap);
    g_mutex_unlock(&fq->lock);
}

static gboolean fq_register(QemuDBusDisplay1Clipboard *skel, GDBusMethodInvocation *inv,
                            FakeQemu *fq)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GVariant) props = g_dbus_connection_call_sync(
        fq->conn, NULL, PATH, "org.freedesktop.DBus.Properties", "GetAll",
        g_variant_new("(s)", "org.qemu.Display1.Clipboard"), NULL,
        G_DBUS_CALL_FLAGS_NONE, 2000, NULL, &error);

    fq_log(fq, "register getall %s;", props ? "ok" : error->message);
    /* qemu_clipboard_reset_serial reaches the new peer too. */
    g_dbus_connection_call(fq->conn, NULL, PATH, "org.qemu.Display1.Clipboard", "Register",
                           NULL, NULL, G_DBUS_CALL_FLAGS_NONE, 2000, NULL, NULL, NULL);
    qemu_dbus_display1_clipboard_complete_register(skel, inv);
    return TRUE;
}

static gboolean fq_unregister(QemuDBusDisplay1Clipboard *skel, GDBusMethodInvocation *inv,
                              FakeQemu *fq)
{
    fq_log(fq, "unregister;");
    qemu_dbus_display1_clipboard_complete_unregister(skel, inv);
    return TRUE;
}

static gboolean fq_grab(QemuDBusDisplay1Clipboard *skel, GDBusMethodInvocation *inv,
                        guint sel, guint serial, const char *const *mimes, FakeQemu *fq)
{
    fq_log(fq, "grab %u %u %s;", sel, serial, mimes[0] ? mimes[0] : "");
    qemu_dbus_display1_clipboard_complete_grab(skel, inv);
    return TRUE;
}

static gboolean fq_release(QemuDBusDisplay1Clipboard *skel, GDBusMethodInvocation *inv,
                           guint sel, FakeQemu *fq)
{
    fq_log(fq, "release %u;", sel);
    qemu_dbus_display1_clipboard_complete_release(skel, inv);
    return TRUE;
}

static gboolean fq_request(QemuDBusDisplay1Clipboard *skel, GDBusMethodInvocation *inv,
                           guint sel, const char *const *mimes, FakeQemu *fq)
{
    (void)mimes;
    fq_log(fq, "request %u;", sel);
    qemu_dbus_display1_clipboard_complete_request(
        skel, inv, MIME, g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, "qemu text", 9, 1));
    return TRUE;
}

static gpointer fq_thread(gpointer data)
{
    FakeQemu *fq = data;
    g_autoptr(GError) error = NULL;
    g_autoptr(GSocketConnection) stream = g_socket_connection_factory_create_connection(fq->socket);
    g_autofree char *guid = g_dbus_generate_guid();

    g_main_context_push_thread_default(fq->ctx);
    fq->conn = g_dbus_connection_new_sync(G_IO_STREAM(stream), guid,
                                          G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_SERVER |
                                          G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_ALLOW_ANONYMOUS,
                                          NULL, NULL, &error);
    g_assert_no_error(error);
    fq->skel = qemu_dbus_display1_clipboard_skeleton_new();
    g_signal_connect(fq->skel, "handle-register", G_CALLBACK(fq_register), fq);
    g_signal_connect(fq->skel, "handle-unregister", G_CALLBACK(fq_unregister), fq);
    g_signal_connect(fq->skel, "handle-grab", G_CALLBACK(fq_grab), fq);
    g_signal_connect(fq->skel, "handle-release", G_CALLBACK(fq_release), fq);
    g_signal_connect(fq->skel, "handle-request", G_CALLBACK(fq_request), fq);
    g_assert_true(g_dbus_interface_skeleton_export(G_DBUS_INTERFACE_SKELETON(fq->skel),
                                                   fq->conn, PATH, &error));
    g_mutex_lock(&fq->lock);
    g_cond_signal(&fq->ready);
    g_mutex_unlock(&fq->lock);
    g_main_loop_run(fq->loop);
    g_dbus_interface_skeleton_unexport(G_DBUS_INTERFACE_SKELETON(fq->skel));
    g_object_unref(fq->skel);
    g_dbus_connection_close_sync(fq->conn, NULL, NULL);
    g_object_unref(fq->conn);
    g_main_context_pop_thread_default(fq->ctx);
    return NULL;
}

/* qemu calling us, from its thread. */
typedef struct {
    FakeQemu *fq;
    const char *method;
    guint sel, serial;
} Call;

static gboolean fq_call(gpointer data)
{
    g_autofree Call *c = data;
    const char *mimes[] = { MIME, NULL };
    g_autoptr(GError) error = NULL;
    g_autoptr(GVariant) ret = NULL;

    if (g_str_equal(c->method, "Request")) {
        const char *mime;
        g_autoptr(GVariant) bytes = NULL;

        ret = g_dbus_connection_call_sync(c->fq->conn, NULL, PATH, "org.qemu.Display1.Clipboard",
                                          "Request", g_variant_new("(u^as)", c->sel, mimes),
                                          G_VARIANT_TYPE("(say)"), G_DBUS_CALL_FLAGS_NONE,
                                          10000, NULL, &error);
        if (ret) {
            g_variant_get(ret, "(&s@ay)", &mime, &bytes);
            fq_log(c->fq, "reply %s %.*s;", mime, (int)g_variant_get_size(bytes),
                   (const char *)g_variant_get_data(bytes));
        } else {
            fq_log(c->fq, "reply-error %s;", error->message);
        }
    } else {
        g_dbus_connection_call(c->fq->conn, NULL, PATH, "org.qemu.Display1.Clipboard", "Grab",
                               g_variant_new("(uu^as)", c->sel, c->serial, mimes), NULL,
                               G_DBUS_CALL_FLAGS_NONE, 2000, NULL, NULL, NULL);
    }
    return G_SOURCE_REMOVE;
}

static void fq_invoke(FakeQemu *fq, const char *method, guint sel, guint serial)
{
    Call *c = g_new0(Call, 1);

    *c = (Call){ fq, method, sel, serial };
    g_main_context_invoke(fq->ctx, fq_call, c);
}

static gboolean fq_has(FakeQemu *fq, const char *what)
{
    gboolean found;

    g_mutex_lock(&fq->lock);
    found = strstr(fq->log->str, what) != NULL;
    g_mutex_unlock(&fq->lock);
    return found;
}

/* Serves our side until `what` is in the fake qemu's log (10 s at most). */
static void wait_for(FakeQemu *fq, const char *what)
{
    gint64 deadline = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;

    while (!fq_has(fq, what)) {
        if (g_get_monotonic_time() > deadline) {
            g_error("fake qemu never logged '%s'; log: %s", what, fq->log->str);
        }
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
}

/* ---- the SPICE client side over the fake connection ------------------------- */

static gboolean keep_all(uint32_t type)
{
    (void)type;
    return TRUE;
}

static void collect(const QsAgentMsg *msg, gpointer user_data)
{
    GString *s = user_data;

    g_string_append_printf(s, "%u:", msg->type);
    for (uint32_t i = 0; i < msg->size; i++) {
        g_string_append_printf(s, "%02x", msg->data[i]);
    }
    g_string_append_c(s, ';');
}

/* The agent messages sent to the client since the last call, as
 * "type:hexbody;" each. */
static char *client_got(QsConn *conn)
{
    GString *s = g_string_new(NULL);
    g_autoptr(QsAgentReader) r = qs_agent_reader_new(keep_all);
    GArray *sent = fake_conn_sent(conn);

    for (guint i = 0; i < sent->len; i++) {
        FakeMsg *m = &g_array_index(sent, FakeMsg, i);
        gsize n;
        const uint8_t *d = g_bytes_get_data(m->payload, &n);

        if (m->type == SPICE_MSG_MAIN_AGENT_DATA) {
            g_assert_true(qs_agent_reader_feed(r, d, n, collect, s, NULL));
        }
    }
    fake_conn_clear(conn);
    return g_string_free(s, FALSE);
}

static void client_send(QsConn *conn, uint32_t type, GBytes *body)
{
    GQueue pieces = G_QUEUE_INIT;

    qs_agent_build(type, g_bytes_get_data(body, NULL), g_bytes_get_size(body), &pieces);
    while (!g_queue_is_empty(&pieces)) {
        g_autoptr(GBytes) p = g_queue_pop_head(&pieces);

        fake_conn_deliver(conn, SPICE_MSGC_MAIN_AGENT_DATA, g_bytes_get_data(p, NULL),
                          g_bytes_get_size(p));
    }
    g_bytes_unref(body);
}

static void test_fake_qemu(void)
{
    int sv[2];
    FakeQemu fq = { 0 };
    g_autoptr(GError) error = NULL;
    g_autoptr(GSocket) ours = NULL;
    g_autoptr(GSocketConnection) stream = NULL;
    g_autoptr(GDBusConnection) conn = NULL;
    QsChannelsConfig cfg = { .vm_name = "vm" };
    const QsServerCallbacks *cb = qs_channels_server_callbacks();
    guint32 caps[QS_SERVER_MAX_CHANNEL_CAPS];
    uint32_t client_caps[1] = { (1u << VD_AGENT_CAP_CLIPBOARD_BY_DEMAND) |
                                (1u << VD_AGENT_CAP_CLIPBOARD_SELECTION) };
    const uint32_t text = VD_AGENT_CLIPBOARD_UTF8_TEXT;
    guint n_caps;
    guint32 session_id;
    QsClipboard *clip;
    QsChannels *hub;
    QsConn *main;
    g_autofree char *got = NULL;
    const uint8_t *init;

    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
    g_mutex_init(&fq.lock);
    g_cond_init(&fq.ready);
    fq.log = g_string_new(NULL);
    fq.ctx = g_main_context_new();
    fq.loop = g_main_loop_new(fq.ctx, FALSE);
    fq.socket = g_socket_new_from_fd(sv[1], &error);
    g_assert_no_error(error);
    fq.thread = g_thread_new("fake-qemu", fq_thread, &fq);
    ours = g_socket_new_from_fd(sv[0], &error);
    g_assert_no_error(error);
    stream = g_socket_connection_factory_create_connection(ours);
    conn = g_dbus_connection_new_sync(G_IO_STREAM(stream), NULL,
                                      G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT, NULL,
                                      NULL, &error);
    g_assert_no_error(error);
    g_mutex_lock(&fq.lock);
    while (!fq.skel) {
        g_cond_wait(&fq.ready, &fq.lock);
    }
    g_mutex_unlock(&fq.lock);

    cfg.screen = qs_screen_new();
    hub = qs_channels_new(&cfg);
    clip = qs_clipboard_new(conn, NULL);
    qs_agent_use_clipboard(hub, clip);
    qs_clipboard_start(clip);
    wait_for(&fq, "register getall ok;");
    while (!qs_clipboard_is_available(clip)) {
        g_main_context_iteration(NULL, TRUE);
    }

    /* A client: the agent is announced. */
    main = fake_conn_new(SPICE_CHANNEL_MAIN, 0, 0, 0);
    cb->prepare(qs_conn_get_link_info(main), caps, &n_caps, hub);
    cb->authorize(qs_conn_get_link_info(main), &session_id, hub);
    fake_conn_set_session_id(main, session_id);
    cb->attach(qs_conn_ref(main), hub);
    init = g_bytes_get_data(g_array_index(fake_conn_sent(main), FakeMsg, 0).payload, NULL);
    g_assert_cmpuint(qs_wire_get_u32(init + 16), ==, 1);
    fake_conn_clear(main);
    fake_conn_deliver(main, SPICE_MSGC_MAIN_AGENT_START, "\xff\xff\xff\xff", 4);
    client_send(main, VD_AGENT_ANNOUNCE_CAPABILITIES, qs_agent_caps_body(TRUE, client_caps, 1));
    g_free(client_got(main));

    /* Client copies: qemu hears a grab with serial 1, then asks (its
     * synchronous Request), and gets the client's text. */
    client_send(main, VD_AGENT_CLIPBOARD_GRAB, qs_agent_grab_body(TRUE, 0, &text, 1));
    wait_for(&fq, "grab 0 1 " MIME ";");
    fq_invoke(&fq, "Request", 0, 0);
    while (!(got = client_got(main))[0]) {
        g_free(got);
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
    g_assert_cmpstr(got, ==, "8:0000000001000000;");       /* REQUEST sel 0 UTF8 */
    client_send(main, VD_AGENT_CLIPBOARD,
                qs_agent_clipboard_body(TRUE, 0, text, "client text", 11));
    wait_for(&fq, "reply " MIME " client text;");

    /* qemu copies with serial 7: the client hears a grab, asks, gets
     * qemu's text; our next grab carries serial 8. */
    fq_invoke(&fq, "Grab", 0, 7);
    g_clear_pointer(&got, g_free);
    while (!(got = client_got(main))[0]) {
        g_free(got);
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
    g_assert_cmpstr(got, ==, "7:0000000001000000;");       /* GRAB sel 0 UTF8 */
    client_send(main, VD_AGENT_CLIPBOARD_REQUEST, qs_agent_request_body(TRUE, 0, text));
    wait_for(&fq, "request 0;");
    g_clear_pointer(&got, g_free);
    while (!(got = client_got(main))[0]) {
        g_free(got);
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
    /* CLIPBOARD sel 0 UTF8 "qemu text" */
    g_assert_cmpstr(got, ==, "4:000000000100000071656d752074657874;");
    client_send(main, VD_AGENT_CLIPBOARD_GRAB, qs_agent_grab_body(TRUE, 2, &text, 1));
    wait_for(&fq, "grab 2 1 ");
    client_send(main, VD_AGENT_CLIPBOARD_GRAB, qs_agent_grab_body(TRUE, 0, &text, 1));
    wait_for(&fq, "grab 0 8 ");

    /* A client that does not answer: qemu gets an error after the bound
     * instead of waiting for ever. */
    fq_invoke(&fq, "Request", 0, 0);
    wait_for(&fq, "reply-error ");
    g_test_message("fake qemu: %s", fq.log->str);
    g_assert_nonnull(strstr(fq.log->str, "did not answer in time"));

    client_send(main, VD_AGENT_CLIPBOARD_RELEASE, qs_agent_release_body(TRUE, 0));
    wait_for(&fq, "release 0;");

    qs_agent_drop_clipboard(hub, clip);
    qs_channels_free(hub);
    fake_loop_run_pending();
    qs_conn_unref(main);
    /* Going away, it unregisters (synchronously: qemu runs apart). */
    qs_clipboard_free(clip);
    g_assert_true(fq_has(&fq, "unregister;"));
    g_dbus_connection_close_sync(conn, NULL, NULL);
    g_main_loop_quit(fq.loop);
    g_main_context_wakeup(fq.ctx);
    g_thread_join(fq.thread);
    g_main_loop_unref(fq.loop);
    g_main_context_unref(fq.ctx);
    g_object_unref(fq.socket);
    g_string_free(fq.log, TRUE);
    g_mutex_clear(&fq.lock);
    g_cond_clear(&fq.ready);
    qs_screen_free(cfg.screen);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/channels/agent-dbus/fake-qemu", test_fake_qemu);
    return g_test_run();
}
