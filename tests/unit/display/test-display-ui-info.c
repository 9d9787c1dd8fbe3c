/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsUiInfo against a fake qemu Console over peer-to-peer D-Bus: coalescing, qemu's refusal, failures. */
#include "display/qs-ui-info.h"
#include "qs-dbus-display1.h"

#include <string.h>
#include <sys/socket.h>

#define PATH "/org/qemu/Display1/Console_3"

/*
 * The fake qemu runs on its own thread and main context, as qemu does beside
 * us. It logs each SetUIInfo and answers as told: at once, with an error, or
 * only when the test releases it (to hold a call in flight).
 */
typedef enum { ANSWER_OK, ANSWER_UNSUPPORTED, ANSWER_FAILED, ANSWER_HOLD } Answer;

typedef struct {
    GThread *thread;
    GMainContext *ctx;
    GMainLoop *loop;
    GSocket *socket;
    GDBusConnection *conn;
    QemuDBusDisplay1Console *skel;
    GMutex lock;
    GCond ready;
    gboolean skel_exported;
    GString *log;
    Answer answer;
    GDBusMethodInvocation *held;
} FakeQemu;

static gboolean fq_set_ui_info(QemuDBusDisplay1Console *skel, GDBusMethodInvocation *inv,
                               guint16 width_mm, guint16 height_mm, gint x, gint y,
                               guint width, guint height, FakeQemu *fq)
{
    Answer answer;

    g_mutex_lock(&fq->lock);
    g_string_append_printf(fq->log, "set %ux%u%+d%+d %ux%umm;", width, height, x, y,
                           width_mm, height_mm);
    answer = fq->answer;
    if (answer == ANSWER_HOLD) {
        fq->held = inv;
    }
    g_mutex_unlock(&fq->lock);
    switch (answer) {
    case ANSWER_OK:
        qemu_dbus_display1_console_complete_set_uiinfo(skel, inv);
        break;
    case ANSWER_UNSUPPORTED:
        g_dbus_method_invocation_return_dbus_error(inv, "org.qemu.Display1.Error.Unsupported",
                                                   "SetUIInfo is not supported");
        break;
    case ANSWER_FAILED:
        g_dbus_method_invocation_return_dbus_error(inv, "org.qemu.Display1.Error.Failed",
                                                   "no");
        break;
    case ANSWER_HOLD:
        break;
    }
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
    fq->skel = qemu_dbus_display1_console_skeleton_new();
    g_signal_connect(fq->skel, "handle-set-uiinfo", G_CALLBACK(fq_set_ui_info), fq);
    g_assert_true(g_dbus_interface_skeleton_export(G_DBUS_INTERFACE_SKELETON(fq->skel),
                                                   fq->conn, PATH, &error));
    g_mutex_lock(&fq->lock);
    fq->skel_exported = TRUE;
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

typedef struct {
    FakeQemu fq;
    GDBusConnection *conn;
    QsUiInfo *ui;
    GString *done;              /* "T" / "F" per answer */
} Fixture;

static void on_done(gboolean applied, gpointer user_data)
{
    g_string_append(((Fixture *)user_data)->done, applied ? "T" : "F");
}

static void setup(Fixture *fx)
{
    int sv[2];
    g_autoptr(GError) error = NULL;
    g_autoptr(GSocket) ours = NULL;
    g_autoptr(GSocketConnection) stream = NULL;

    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
    g_mutex_init(&fx->fq.lock);
    g_cond_init(&fx->fq.ready);
    fx->fq.log = g_string_new(NULL);
    fx->fq.ctx = g_main_context_new();
    fx->fq.loop = g_main_loop_new(fx->fq.ctx, FALSE);
    fx->fq.socket = g_socket_new_from_fd(sv[1], &error);
    g_assert_no_error(error);
    g_mutex_lock(&fx->fq.lock);
    fx->fq.thread = g_thread_new("fake-qemu", fq_thread, &fx->fq);
    g_mutex_unlock(&fx->fq.lock);

    /* The handshake needs both sides: the fake's thread is running. */
    ours = g_socket_new_from_fd(sv[0], &error);
    g_assert_no_error(error);
    stream = g_socket_connection_factory_create_connection(ours);
    fx->conn = g_dbus_connection_new_sync(G_IO_STREAM(stream), NULL,
                                          G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT,
                                          NULL, NULL, &error);
    g_assert_no_error(error);
    g_mutex_lock(&fx->fq.lock);
    while (!fx->fq.skel_exported) {
        g_cond_wait(&fx->fq.ready, &fx->fq.lock);
    }
    g_mutex_unlock(&fx->fq.lock);
    fx->done = g_string_new(NULL);
    fx->ui = qs_ui_info_new(fx->conn, NULL, 3, on_done, fx);
}

static void teardown(Fixture *fx)
{
    qs_ui_info_free(fx->ui);
    g_main_loop_quit(fx->fq.loop);
    g_thread_join(fx->fq.thread);
    g_dbus_connection_close_sync(fx->conn, NULL, NULL);
    g_object_unref(fx->conn);
    /* Replies cancelled by the free still run their callbacks. */
    while (g_main_context_iteration(NULL, FALSE)) {
    }
    g_object_unref(fx->fq.socket);
    g_main_loop_unref(fx->fq.loop);
    g_main_context_unref(fx->fq.ctx);
    g_string_free(fx->fq.log, TRUE);
    g_string_free(fx->done, TRUE);
    g_mutex_clear(&fx->fq.lock);
    g_cond_clear(&fx->fq.ready);
}

static void set_answer(Fixture *fx, Answer answer)
{
    g_mutex_lock(&fx->fq.lock);
    fx->fq.answer = answer;
    g_mutex_unlock(&fx->fq.lock);
}

static char *fq_log(Fixture *fx)
{
    char *s;

    g_mutex_lock(&fx->fq.lock);
    s = g_strdup(fx->fq.log->str);
    g_mutex_unlock(&fx->fq.lock);
    return s;
}

/* Runs our main context until `done` has `n` answers (bounded). */
static void wait_done(Fixture *fx, gsize n)
{
    gint64 deadline = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;

    while (fx->done->len < n) {
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
}

static gboolean fq_has_held(Fixture *fx)
{
    gboolean held;

    g_mutex_lock(&fx->fq.lock);
    held = fx->fq.held != NULL;
    g_mutex_unlock(&fx->fq.lock);
    return held;
}

static gboolean fq_release(gpointer data)
{
    FakeQemu *fq = data;
    GDBusMethodInvocation *inv;

    g_mutex_lock(&fq->lock);
    inv = fq->held;
    fq->held = NULL;
    fq->answer = ANSWER_OK;
    g_mutex_unlock(&fq->lock);
    qemu_dbus_display1_console_complete_set_uiinfo(fq->skel, inv);
    return G_SOURCE_REMOVE;
}

/* Requests made while a call is in flight: only the newest follows it,
 * and one answer serves them all. */
static void test_coalesce(void)
{
    Fixture fx = { 0 };
    gint64 deadline = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
    g_autofree char *log = NULL;

    setup(&fx);
    set_answer(&fx, ANSWER_HOLD);
    qs_ui_info_request(fx.ui, &(QsUiInfoRequest){ .width = 800, .height = 600 });
    while (!fq_has_held(&fx)) {
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_usleep(1000);
    }
    qs_ui_info_request(fx.ui, &(QsUiInfoRequest){ .width = 640, .height = 480 });
    qs_ui_info_request(fx.ui, &(QsUiInfoRequest){ 300, 200, 10, -20, 1024, 768 });
    g_assert_cmpstr(fx.done->str, ==, "");
    g_main_context_invoke(fx.fq.ctx, fq_release, &fx.fq);
    wait_done(&fx, 1);
    g_assert_cmpstr(fx.done->str, ==, "T");
    log = fq_log(&fx);
    g_assert_cmpstr(log, ==, "set 800x600+0+0 0x0mm;set 1024x768+10-20 300x200mm;");
    g_assert_true(qs_ui_info_is_supported(fx.ui));
    teardown(&fx);
}

/* qemu says the device has no UI info: one log line, then no more calls. */
static void test_unsupported(void)
{
    Fixture fx = { 0 };
    g_autofree char *log = NULL;

    setup(&fx);
    set_answer(&fx, ANSWER_UNSUPPORTED);
    g_test_expect_message(G_LOG_DOMAIN, G_LOG_LEVEL_MESSAGE,
                          "display: /org/qemu/Display1/Console_3 cannot change its mode "
                          "(SetUIInfo: org.qemu.Display1.Error.Unsupported: SetUIInfo is not "
                          "supported)*");
    qs_ui_info_request(fx.ui, &(QsUiInfoRequest){ .width = 800, .height = 600 });
    wait_done(&fx, 1);
    g_test_assert_expected_messages();
    g_assert_false(qs_ui_info_is_supported(fx.ui));
    qs_ui_info_request(fx.ui, &(QsUiInfoRequest){ .width = 640, .height = 480 });
    qs_ui_info_request(fx.ui, &(QsUiInfoRequest){ .width = 640, .height = 480 });
    g_assert_cmpstr(fx.done->str, ==, "FFF");
    log = fq_log(&fx);
    g_assert_cmpstr(log, ==, "set 800x600+0+0 0x0mm;");
    teardown(&fx);
}

/* Another error is not a verdict on the device: the next request calls. */
static void test_failed(void)
{
    Fixture fx = { 0 };
    g_autofree char *log = NULL;

    setup(&fx);
    set_answer(&fx, ANSWER_FAILED);
    g_test_expect_message(G_LOG_DOMAIN, G_LOG_LEVEL_MESSAGE, "display: SetUIInfo on*failed*");
    qs_ui_info_request(fx.ui, &(QsUiInfoRequest){ .width = 800, .height = 600 });
    wait_done(&fx, 1);
    g_test_assert_expected_messages();
    g_assert_true(qs_ui_info_is_supported(fx.ui));
    set_answer(&fx, ANSWER_OK);
    qs_ui_info_request(fx.ui, &(QsUiInfoRequest){ .width = 640, .height = 480 });
    wait_done(&fx, 2);
    g_assert_cmpstr(fx.done->str, ==, "FT");
    log = fq_log(&fx);
    g_assert_cmpstr(log, ==, "set 800x600+0+0 0x0mm;set 640x480+0+0 0x0mm;");
    teardown(&fx);
}

/* Freed with a call in flight: its answer never reaches `done`. */
static void test_free_in_flight(void)
{
    Fixture fx = { 0 };
    gint64 deadline = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;

    setup(&fx);
    set_answer(&fx, ANSWER_HOLD);
    qs_ui_info_request(fx.ui, &(QsUiInfoRequest){ .width = 800, .height = 600 });
    while (!fq_has_held(&fx)) {
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_usleep(1000);
    }
    g_clear_pointer(&fx.ui, qs_ui_info_free);
    g_main_context_invoke(fx.fq.ctx, fq_release, &fx.fq);
    g_usleep(100 * 1000);
    while (g_main_context_iteration(NULL, FALSE)) {
    }
    g_assert_cmpstr(fx.done->str, ==, "");
    teardown(&fx);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/display/ui-info/coalesce", test_coalesce);
    g_test_add_func("/display/ui-info/unsupported", test_unsupported);
    g_test_add_func("/display/ui-info/failed", test_failed);
    g_test_add_func("/display/ui-info/free-in-flight", test_free_in_flight);
    return g_test_run();
}
