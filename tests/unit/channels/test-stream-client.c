/* SPDX-License-Identifier: GPL-2.0-or-later */
/* End to end: an animated area reaches spice-gtk as a video stream, the rest stays exact, the still picture is exact. */
#include "channels/qs-channels.h"
#include "fake-peers.h"
#include "net/qs-net-config.h"
#include "net/qs-server.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>

#define W 640
#define H 400
/* Not on the 16-pixel grid, so the stream rectangle must come from the
 * exact pixel bounds, not from blocks. */
#define AX 203
#define AY 97
#define AW 160
#define AH 120
#define FRAME_MS 33
#define ANIM_START_MS 1000
#define ANIM_FRAMES 90          /* 3 s at 30 fps */
#define MID_MS 2800             /* client time: mid-animation */
#define FINAL_MS 5000           /* client time: at least 1 s after the end */

typedef struct {
    QsScreen *screen;
    QsChannels *channels;
    QsNetConfig ncfg;
    QsServer *server;
    char *port;
    uint32_t frame;
    int64_t anim_start_us;
    int64_t stream_start_us;
    uint32_t stream_start_frame;    /* frames drawn when it started */
    GString *log;
    GMainLoop *loop;
    gboolean exited;
    char *out, *err;
} Fx;

/* Flat UI-like background: few colours, so it goes lossless. */
static uint32_t background(uint32_t x, uint32_t y)
{
    static const uint32_t c[3] = { 0xf0f0f0, 0x202020, 0x3060c0 };

    return c[((x / 8) + (y / 12) * 2 + ((x * y) % 7 == 0)) % 3];
}

/* A moving gradient with noise: photographic, different every frame. */
static uint32_t animated(uint32_t x, uint32_t y, uint32_t f)
{
    uint32_t n = (x * 2654435761u ^ y * 40503u ^ f * 9973u) >> 27;

    return (((x + f * 4) & 0xff) ^ n) | ((((y * 2 + f * 3) & 0xff) ^ n) << 8) |
           ((((x + y + f * 5) / 2) & 0xff) << 16);
}

static gboolean on_frame(gpointer user_data)
{
    Fx *fx = user_data;
    g_autofree uint32_t *px = g_new(uint32_t, AW * AH);
    g_autoptr(GError) error = NULL;

    if (fx->frame == 0) {
        fx->anim_start_us = g_get_monotonic_time();
    }
    for (uint32_t y = 0; y < AH; y++) {
        for (uint32_t x = 0; x < AW; x++) {
            px[y * AW + x] = animated(AX + x, AY + y, fx->frame);
        }
    }
    g_assert_true(qs_screen_update(fx->screen, AX, AY, AW, AH, AW * 4, QS_PIXMAN_X8R8G8B8,
                                   (const uint8_t *)px, AW * AH * 4, g_get_monotonic_time(),
                                   &error));
    return ++fx->frame < ANIM_FRAMES ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static gboolean start_anim(gpointer user_data)
{
    g_timeout_add(FRAME_MS, on_frame, user_data);
    on_frame(user_data);
    return G_SOURCE_REMOVE;
}

static void on_log(const char *domain, GLogLevelFlags level, const char *msg, gpointer data)
{
    Fx *fx = data;

    (void)domain;
    (void)level;
    if (g_str_has_prefix(msg, "display: stream ") && strstr(msg, " fps, ") && !fx->stream_start_us) {
        fx->stream_start_us = g_get_monotonic_time();
        fx->stream_start_frame = fx->frame;
    }
    g_string_append_printf(fx->log, "%s\n", msg);
}

static void on_output(GObject *source, GAsyncResult *res, gpointer user_data)
{
    Fx *fx = user_data;
    g_autoptr(GError) error = NULL;

    g_subprocess_communicate_utf8_finish(G_SUBPROCESS(source), res, &fx->out, &fx->err,
                                         &error);
    g_assert_no_error(error);
    fx->exited = TRUE;
    g_main_loop_quit(fx->loop);
}

static guint count(const char *hay, const char *needle)
{
    guint n = 0;

    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) {
        n++;
    }
    return n;
}

/* Compares a client dump (stride W*4) with the screen; `outside_only`
 * skips the animated rectangle. Returns the number of differing pixels. */
static guint compare_dump(Fx *fx, const char *path, gboolean outside_only)
{
    g_autofree char *data = NULL;
    g_autofree uint8_t *ref = g_malloc((gsize)W * H * 4);
    gsize len = 0;
    g_autoptr(GError) error = NULL;
    QsScreenInfo info;
    QsRect all = { 0, 0, W, H };
    guint bad = 0;

    g_assert_true(g_file_get_contents(path, &data, &len, &error));
    g_assert_cmpuint(len, ==, (gsize)W * H * 4);
    qs_screen_get_info(fx->screen, &info);
    g_assert_true(qs_screen_read(fx->screen, info.serial, &all, ref, W * 4, &error));
    for (uint32_t y = 0; y < H; y++) {
        for (uint32_t x = 0; x < W; x++) {
            gboolean in = x >= AX && x < AX + AW && y >= AY && y < AY + AH;
            const uint8_t *a = (const uint8_t *)data + ((gsize)y * W + x) * 4;
            const uint8_t *b = ref + ((gsize)y * W + x) * 4;

            if ((outside_only && in) || memcmp(a, b, 3) == 0) {
                continue;
            }
            if (!bad) {
                g_test_message("%s: first difference at %u,%u", path, x, y);
            }
            bad++;
        }
    }
    return bad;
}

static void test_stream(void)
{
    const char *script = g_getenv("QS_SPICE_GI_STREAM");
    g_autofree uint32_t *px = g_new(uint32_t, W * H);
    g_autoptr(GError) error = NULL;
    g_autoptr(GSubprocess) proc = NULL;
    g_autoptr(GSubprocessLauncher) launcher = NULL;
    g_autofree char *dir = NULL, *mid = NULL, *fin = NULL, *out = NULL, *err = NULL;
    g_autofree char *ms_mid = g_strdup_printf("%d", MID_MS);
    g_autofree char *ms_fin = g_strdup_printf("%d", FINAL_MS);
    QsChannelsConfig ccfg = { .vm_name = "stream" };
    Fx fx = { 0 };
    guint handler, bad_mid, bad_final, created, margins, frames = 0, flushes = 0, drops = 1;
    const char *summary;

    if (!script) {
        g_test_fail_printf("QS_SPICE_GI_STREAM is not set");
        return;
    }
    fx.log = g_string_new(NULL);
    handler = g_log_set_handler(NULL, G_LOG_LEVEL_DEBUG | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO,
                                on_log, &fx);
    for (uint32_t y = 0; y < H; y++) {
        for (uint32_t x = 0; x < W; x++) {
            px[y * W + x] = background(x, y);
        }
    }
    fx.screen = qs_screen_new();
    g_assert_true(qs_screen_scanout(fx.screen, W, H, W * 4, QS_PIXMAN_X8R8G8B8,
                                    (const uint8_t *)px, (gsize)W * H * 4,
                                    g_get_monotonic_time(), &error));
    ccfg.screen = fx.screen;
    fx.channels = qs_channels_new(&ccfg);
    qs_net_config_init(&fx.ncfg);
    fx.ncfg.listen = g_strdup("127.0.0.1:0");
    fx.ncfg.disable_ticketing = TRUE;
    g_assert_true(qs_net_config_validate(&fx.ncfg, &error));
    fx.server = qs_server_new(&fx.ncfg, qs_channels_server_callbacks(), fx.channels, &error);
    g_assert_no_error(error);
    fx.port = g_strdup_printf("%u", qs_server_get_port(fx.server, FALSE));

    dir = g_dir_make_tmp("qs-stream-XXXXXX", &error);
    g_assert_no_error(error);
    mid = g_build_filename(dir, "mid.raw", NULL);
    fin = g_build_filename(dir, "final.raw", NULL);
    launcher = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                         G_SUBPROCESS_FLAGS_STDERR_PIPE);
    g_subprocess_launcher_setenv(launcher, "SPICE_DEBUG", "1", TRUE);
    proc = g_subprocess_launcher_spawn(launcher, &error, "/usr/bin/python3", script,
                                       "127.0.0.1", fx.port, ms_mid, ms_fin, mid, fin, NULL);
    g_assert_no_error(error);
    fx.loop = g_main_loop_new(NULL, FALSE);
    g_timeout_add(ANIM_START_MS, start_anim, &fx);
    /* Read both pipes while serving (spice-gtk's debug log is large). */
    g_subprocess_communicate_utf8_async(proc, NULL, NULL, on_output, &fx);
    g_main_loop_run(fx.loop);
    g_assert_true(fx.exited);
    out = g_steal_pointer(&fx.out);
    err = g_steal_pointer(&fx.err);
    g_test_message("client said %zu + %zu bytes", strlen(out), strlen(err));

    /* Let the server see the disconnect and log its summary. */
    qs_server_free(fx.server);
    qs_channels_free(fx.channels);
    for (int i = 0; i < 200 && g_main_context_iteration(NULL, FALSE); i++) {
    }
    g_log_remove_handler(NULL, handler);
    g_test_message("server log:\n%s", fx.log->str);

    g_subprocess_wait(proc, NULL, NULL);
    g_assert_cmpint(g_subprocess_get_exit_status(proc), ==, 0);
    g_assert_true(g_file_test(mid, G_FILE_TEST_EXISTS));
    g_assert_true(g_file_test(fin, G_FILE_TEST_EXISTS));
    bad_mid = compare_dump(&fx, mid, TRUE);
    bad_final = compare_dump(&fx, fin, FALSE);
    g_test_message("mid-animation background pixels differing: %u; final: %u", bad_mid, bad_final);

    created = count(fx.log->str, " fps, ");
    g_assert_cmpuint(created, >=, 1);
    g_assert_nonnull(strstr(fx.log->str, "h264 160x120 at 203,97"));
    g_assert_true(fx.stream_start_us > 0);
    g_test_message("stream started %" G_GINT64_FORMAT " ms after the animation, at frame %u",
                   (fx.stream_start_us - fx.anim_start_us) / 1000, fx.stream_start_frame);
    /* When the stream starts, and how many frames it carries (below), are
     * figures here: the animation and the pump run on the real clock, so
     * both move with the host's load. The plan's exact counts (the stream
     * at the 5th frame, every frame of an animation carried, the flush)
     * are asserted on a fake clock by channels-display-stream. */
    summary = strstr(fx.log->str, "display session:");
    g_assert_nonnull(summary);
    {
        /* The socket-level byte count comes from TCP_INFO (net). */
        unsigned long long bytes = 0;

        g_assert_cmpint(sscanf(summary, "display session: %*f s, %llu bytes", &bytes), ==, 1);
        g_assert_cmpuint(bytes, >, 100000);
    }
    summary = strstr(summary, "frames ");
    g_assert_nonnull(summary);
    g_assert_cmpint(sscanf(summary, "frames %u (%*u bytes, %u flushes", &frames, &flushes), ==, 2);
    g_assert_nonnull(strstr(fx.log->str, "client drops "));
    g_assert_cmpint(sscanf(strstr(fx.log->str, "client drops "), "client drops %u", &drops), ==, 1);
    g_test_message("frames %u, flushes %u, client drops %u", frames, flushes, drops);
    g_assert_cmpuint(frames, >=, 1);
    g_assert_cmpuint(flushes, >=, 1);
    {
        /* Every frame sent took at least one pump; the heat snapshot is
         * taken in some of them. */
        unsigned pumps = 0, snapshots = 0;
        const char *p = strstr(fx.log->str, "pumps ");

        g_assert_nonnull(p);
        g_assert_cmpint(sscanf(p, "pumps %u (%*f/s), heat snapshots %u", &pumps, &snapshots),
                        ==, 2);
        g_test_message("pumps %u, heat snapshots %u", pumps, snapshots);
        g_assert_cmpuint(pumps, >=, frames);
        g_assert_cmpuint(snapshots, <=, pumps);
    }
    /* Late arrivals the client reported (H.264 frames are still decoded)
     * and frames superseded at playback (below) depend on the host's load,
     * not on what was sent: 0 on an idle host, 1-5 seen on a sanitizer
     * build beside other work. They are figures, printed here; lateness is
     * asserted by tests/integration/test_stream_late.py with its measured
     * spread. */
    /* spice-gtk logs "video margin" for every STREAM_DATA it handles (GLib
     * writes debug messages to stdout). */
    {
        g_autofree char *all = g_strconcat(out, err, NULL);

        g_free(err);
        err = g_steal_pointer(&all);
    }
    margins = count(err, "video margin: ");
    g_test_message("client handled %u stream frames; streams created %u, destroyed %u",
                   margins, count(err, "display_handle_stream_create:"),
                   count(err, "display_handle_stream_destroy:"));
    /* Every frame sent is accounted for: handled (its margin logged), or
     * dropped on arrival for being late, which spice-gtk reports back
     * (client drops) and counts in its own statistics. Those drops come
     * from load (0 on an idle host; 1 in two runs of the sanitizer build
     * at load 9-13), so they are a figure; the accounting is not. */
    g_assert_cmpuint(margins + drops, ==, frames + flushes);
    g_assert_cmpuint(count(err, "display_handle_stream_create:"), ==, created);
    {
        g_autofree char *stat = g_strdup_printf("#drops-on-receive=%u", drops);

        g_assert_nonnull(strstr(err, stat));
    }
    /* A decoded frame is dropped at playback only when it is late and a
     * newer one is already decoded: under CPU contention spice-gtk's
     * decoder start-up (hundreds of ms) can do that to the first frame. */
    g_test_message("frames superseded at playback: %u", count(err, ", dropping"));
    g_assert_null(strstr(err, "GStreamer error"));
    g_assert_cmpuint(bad_mid, ==, 0);
    g_assert_cmpuint(bad_final, ==, 0);

    g_unlink(mid);
    g_unlink(fin);
    g_rmdir(dir);
    qs_net_config_clear(&fx.ncfg);
    qs_screen_free(fx.screen);
    g_free(fx.port);
    g_string_free(fx.log, TRUE);
    g_main_loop_unref(fx.loop);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/channels/client/stream-h264", test_stream);
    return g_test_run();
}
