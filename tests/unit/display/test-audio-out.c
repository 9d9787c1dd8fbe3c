/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the AudioOutListener door against a fake qemu in-process: registration, order, validation, the bounded queue. */

#include <gio/gunixfdlist.h>
#include <string.h>
#include <sys/socket.h>

#include "display/qs-audio-out.h"
#include "qs-dbus-display1.h"

#define FRAMES 441u                     /* 10 ms at 44100 Hz, S16 stereo */
#define WRITES 60u

typedef struct {
    /* The fake qemu. */
    GDBusConnection *qemu_main;         /* its end of the display connection */
    QemuDBusDisplay1Audio *audio;
    GDBusConnection *qemu_listener;     /* its end of our listener connection */
    /* The helper's side. */
    GDBusConnection *helper_main;
    QsAudioOut *out;
    /* What the door delivered. */
    GString *log;
    guint64 bytes;
    guint first_index, last_index;
    gboolean available;
    gboolean refuse;            /* the fake qemu refuses the registration */
} Fixture;

static void on_available(gboolean available, gpointer data)
{
    Fixture *fx = data;

    fx->available = available;
    g_string_append_printf(fx->log, "available %d;", available);
}

static void on_init(uint64_t id, const QsAudioFormat *f, gpointer data)
{
    g_string_append_printf(((Fixture *)data)->log, "init %" G_GUINT64_FORMAT " %u %u;",
                           id, f->freq, f->nchannels);
}

static void on_fini(uint64_t id, gpointer data)
{
    g_string_append_printf(((Fixture *)data)->log, "fini %" G_GUINT64_FORMAT ";", id);
}

static void on_enabled(uint64_t id, gboolean enabled, gpointer data)
{
    g_string_append_printf(((Fixture *)data)->log, "enabled %" G_GUINT64_FORMAT " %d;",
                           id, enabled);
}

static void on_volume(uint64_t id, gboolean mute, const uint8_t *v, guint n, gpointer data)
{
    g_string_append_printf(((Fixture *)data)->log, "volume %" G_GUINT64_FORMAT " %d %u %u;",
                           id, mute, n, n ? v[0] : 0);
}

/* Each Write's frames all carry its index in their first byte. */
static void on_write(uint64_t id, GBytes *pcm, gpointer data)
{
    Fixture *fx = data;
    gsize size;
    const uint8_t *p = g_bytes_get_data(pcm, &size);

    g_assert_cmpuint(id, ==, 1);
    g_assert_cmpuint(size % 4, ==, 0);
    if (fx->bytes == 0) {
        fx->first_index = p[0];
    }
    fx->last_index = p[size - 4];
    fx->bytes += size;
}

static const QsAudioOutFuncs funcs = {
    on_available, on_init, on_fini, on_enabled, on_volume, on_write,
};

static void on_listener_conn(GObject *source, GAsyncResult *res, gpointer data)
{
    Fixture *fx = data;
    g_autoptr(GError) error = NULL;

    (void)source;
    fx->qemu_listener = g_dbus_connection_new_finish(res, &error);
    g_assert_no_error(error);
}

/* Like qemu: answer, then open the p2p connection on the passed fd as the
 * authenticating server. */
static gboolean on_register(QemuDBusDisplay1Audio *audio, GDBusMethodInvocation *inv,
                            GUnixFDList *fds, GVariant *handle, gpointer data)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GSocket) socket = NULL;
    g_autoptr(GSocketConnection) stream = NULL;
    g_autofree char *guid = g_dbus_generate_guid();
    int fd;

    if (((Fixture *)data)->refuse) {
        g_dbus_method_invocation_return_error_literal(inv, G_DBUS_ERROR, G_DBUS_ERROR_FAILED,
                                                      "no listener for you");
        return TRUE;
    }
    fd = g_unix_fd_list_get(fds, g_variant_get_handle(handle), &error);
    g_assert_no_error(error);
    qemu_dbus_display1_audio_complete_register_out_listener(audio, inv, NULL);
    socket = g_socket_new_from_fd(fd, &error);
    g_assert_no_error(error);
    stream = g_socket_connection_factory_create_connection(socket);
    g_dbus_connection_new(G_IO_STREAM(stream), guid,
                          G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_SERVER, NULL, NULL,
                          on_listener_conn, data);
    return TRUE;
}

static void on_main_conn(GObject *source, GAsyncResult *res, gpointer data)
{
    GDBusConnection **conn = data;
    g_autoptr(GError) error = NULL;

    (void)source;
    *conn = g_dbus_connection_new_finish(res, &error);
    g_assert_no_error(error);
}

static void setup(Fixture *fx)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *guid = g_dbus_generate_guid();
    int pair[2];
    GSocket *a, *b;
    GSocketConnection *sa, *sb;

    memset(fx, 0, sizeof(*fx));
    fx->log = g_string_new(NULL);
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), ==, 0);
    a = g_socket_new_from_fd(pair[0], &error);
    b = g_socket_new_from_fd(pair[1], &error);
    g_assert_no_error(error);
    sa = g_socket_connection_factory_create_connection(a);
    sb = g_socket_connection_factory_create_connection(b);
    g_dbus_connection_new(G_IO_STREAM(sa), guid, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_SERVER,
                          NULL, NULL, on_main_conn, &fx->qemu_main);
    g_dbus_connection_new(G_IO_STREAM(sb), NULL, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT,
                          NULL, NULL, on_main_conn, &fx->helper_main);
    while (!fx->qemu_main || !fx->helper_main) {
        g_main_context_iteration(NULL, TRUE);
    }
    g_object_unref(sa);
    g_object_unref(sb);
    g_object_unref(a);
    g_object_unref(b);
    fx->audio = qemu_dbus_display1_audio_skeleton_new();
    g_signal_connect(fx->audio, "handle-register-out-listener", G_CALLBACK(on_register), fx);
    g_dbus_interface_skeleton_export(G_DBUS_INTERFACE_SKELETON(fx->audio), fx->qemu_main,
                                     "/org/qemu/Display1/Audio", &error);
    g_assert_no_error(error);
    fx->out = qs_audio_out_new(fx->helper_main, NULL);
    qs_audio_out_set_funcs(fx->out, &funcs, fx);
}

static void teardown(Fixture *fx)
{
    qs_audio_out_free(fx->out);
    g_clear_object(&fx->qemu_listener);
    g_dbus_interface_skeleton_unexport(G_DBUS_INTERFACE_SKELETON(fx->audio));
    g_object_unref(fx->audio);
    g_dbus_connection_close_sync(fx->helper_main, NULL, NULL);
    g_dbus_connection_close_sync(fx->qemu_main, NULL, NULL);
    g_object_unref(fx->helper_main);
    g_object_unref(fx->qemu_main);
    g_string_free(fx->log, TRUE);
}

/* A call from the fake qemu to our listener, waited for without running
 * the main context (the door's thread answers). */
static void qemu_call(Fixture *fx, const char *method, GVariant *args)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GVariant) ret = g_dbus_connection_call_sync(
        fx->qemu_listener, NULL, "/org/qemu/Display1/AudioOutListener",
        "org.qemu.Display1.AudioOutListener", method, args, NULL,
        G_DBUS_CALL_FLAGS_NONE, 5000, NULL, &error);

    g_assert_no_error(error);
}

static GVariant *pcm(guint index, gsize bytes)
{
    g_autofree uint8_t *p = g_malloc(bytes);

    memset(p, (int)index, bytes);
    return g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, p, bytes, 1);
}

static void test_queue(void)
{
    Fixture fx;
    gint64 deadline;

    setup(&fx);
    g_assert_true(qs_audio_out_start(fx.out, QS_DISPLAY_AUDIO_YES));   /* answer to come */
    deadline = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
    while ((!fx.available || !fx.qemu_listener) && g_get_monotonic_time() < deadline) {
        g_main_context_iteration(NULL, TRUE);
    }
    g_assert_true(fx.available);
    g_assert_nonnull(fx.qemu_listener);

    /* Before Init: dropped. A format that does not add up: refused. */
    qemu_call(&fx, "Write", g_variant_new("(t@ay)", (guint64)1, pcm(0, 16)));
    g_test_expect_message(NULL, G_LOG_LEVEL_WARNING, "audio: voice 2 ignored: *");
    qemu_call(&fx, "Init", g_variant_new("(tybbuyuub)", (guint64)2, 16, TRUE, FALSE,
                                         44100, 2, 4, 44100 * 3, FALSE));
    g_test_assert_expected_messages();
    qemu_call(&fx, "Init", g_variant_new("(tybbuyuub)", (guint64)1, 16, TRUE, FALSE,
                                         44100, 2, 4, 44100 * 4, FALSE));
    qemu_call(&fx, "SetEnabled", g_variant_new("(tb)", (guint64)1, TRUE));
    qemu_call(&fx, "SetVolume", g_variant_new("(tb@ay)", (guint64)1, TRUE, pcm(200, 2)));
    /* 600 ms of sound while the main loop sleeps: 200 ms is kept, the newest. */
    for (guint i = 1; i <= WRITES; i++) {
        qemu_call(&fx, "Write", g_variant_new("(t@ay)", (guint64)1, pcm(i, FRAMES * 4)));
    }
    qemu_call(&fx, "Write", g_variant_new("(t@ay)", (guint64)1, pcm(99, 6)));   /* one frame */
    qemu_call(&fx, "Fini", g_variant_new("(t)", (guint64)1));
    while (g_main_context_iteration(NULL, FALSE)) {
    }
    g_assert_cmpstr(fx.log->str, ==,
                    "available 1;init 1 44100 2;enabled 1 1;volume 1 1 2 200;fini 1;");
    g_assert_cmpuint(fx.bytes, <=, 44100u * 4 / 5);
    g_assert_cmpuint(fx.bytes, >=, 44100u * 4 / 5 - FRAMES * 4);
    g_assert_cmpuint(fx.last_index, ==, 99);
    g_assert_cmpuint(fx.first_index, >, WRITES - 20);
    g_assert_cmpuint(qs_audio_out_get_dropped(fx.out), >=, WRITES - 20);
    teardown(&fx);
}

static void test_no_audio(void)
{
    Fixture fx;

    setup(&fx);
    /* qemu without -audiodev dbus: nothing is asked, nothing offered. */
    g_assert_false(qs_audio_out_start(fx.out, QS_DISPLAY_AUDIO_NONE));  /* no answer to wait for */
    while (g_main_context_iteration(NULL, FALSE)) {
    }
    g_assert_false(qs_audio_out_is_available(fx.out));
    g_assert_cmpstr(fx.log->str, ==, "");
    teardown(&fx);
}

/* qemu refuses: the owner hears "not available" once, so that whoever
 * waits for the answer (the channel lists) stops waiting. The refusal and
 * the hang-up of the listener's unused connection race: either may tell. */
static void test_refused(void)
{
    Fixture fx;
    gint64 deadline;

    setup(&fx);
    fx.refuse = TRUE;
    g_assert_true(qs_audio_out_start(fx.out, QS_DISPLAY_AUDIO_YES));
    deadline = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
    while (fx.log->len == 0 && g_get_monotonic_time() < deadline) {
        g_main_context_iteration(NULL, TRUE);
    }
    /* Whatever else was on its way arrives too. */
    deadline = g_get_monotonic_time() + G_USEC_PER_SEC / 4;
    while (g_get_monotonic_time() < deadline) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
    g_assert_cmpstr(fx.log->str, ==, "available 0;");
    g_assert_false(qs_audio_out_is_available(fx.out));
    teardown(&fx);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/display/audio-out/refused", test_refused);
    g_test_add_func("/display/audio-out/queue", test_queue);
    g_test_add_func("/display/audio-out/no-audio", test_no_audio);
    return g_test_run();
}
