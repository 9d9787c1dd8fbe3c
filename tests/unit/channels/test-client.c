/* SPDX-License-Identifier: GPL-2.0-or-later */
/* End to end: the real net layer and our channels serve spice-gtk (spicy-screenshot, SpiceClientGLib). */
#include "channels/qs-channels.h"
#include "fake-peers.h"
#include "net/qs-net-config.h"
#include "net/qs-server.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>

#define W 320
#define H 200
/* spicy-screenshot saves after the first draw: a surface of at most 64
 * blocks goes as one fast-lane DRAW_COPY. */
#define SHOT_H 48

static uint32_t pattern(uint32_t x, uint32_t y)
{
    return ((x * 5) & 0xff) | (((y * 3) & 0xff) << 8) | ((((x ^ y) * 7) & 0xff) << 16);
}

typedef struct {
    GMainLoop *loop;
    gboolean exited;
    gboolean timed_out;
} Wait;

static void on_exited(GObject *source, GAsyncResult *res, gpointer user_data)
{
    Wait *wait = user_data;

    g_subprocess_wait_finish(G_SUBPROCESS(source), res, NULL);
    wait->exited = TRUE;
    g_main_loop_quit(wait->loop);
}

static gboolean on_timeout(gpointer user_data)
{
    Wait *wait = user_data;

    wait->timed_out = TRUE;
    g_main_loop_quit(wait->loop);
    return G_SOURCE_REMOVE;
}

/* P6 "W H 255" RGB; SPICE xRGB pixels are B,G,R,X in memory. */
static void check_ppm(const char *path, uint32_t w, uint32_t h)
{
    g_autofree char *data = NULL;
    gsize len;
    g_autoptr(GError) error = NULL;
    g_autofree char *header = g_strdup_printf("P6\n%u %u\n255\n", w, h);
    const uint8_t *px;

    g_assert_true(g_file_get_contents(path, &data, &len, &error));
    g_assert_no_error(error);
    g_assert_cmpuint(len, ==, strlen(header) + w * h * 3);
    g_assert_cmpmem(data, strlen(header), header, strlen(header));
    px = (const uint8_t *)data + strlen(header);
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            uint32_t v = pattern(x, y);
            const uint8_t *p = px + (y * w + x) * 3;

            if (p[0] != ((v >> 16) & 0xff) || p[1] != ((v >> 8) & 0xff) || p[2] != (v & 0xff)) {
                g_error("pixel %u,%u: %02x%02x%02x, expected %06x", x, y, p[0], p[1], p[2], v);
            }
        }
    }
}

typedef struct {
    QsScreen *screen;
    QsCursor *cursor;
    QsInput *input;
    QsChannels *channels;
    QsNetConfig ncfg;
    QsServer *server;
    char *port;
} Server;

static void server_start(Server *s, uint32_t w, uint32_t h, QsCursor *cursor,
                         QsInput *input)
{
    g_autofree uint32_t *px = g_new(uint32_t, (gsize)w * h);
    g_autoptr(GError) error = NULL;
    QsChannelsConfig ccfg = { .vm_name = "e2e",
                              .vm_uuid = "00000000-0000-0000-0000-000000000001",
                              .cursor = cursor, .input = input };

    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            px[y * w + x] = pattern(x, y);
        }
    }
    s->screen = qs_screen_new();
    g_assert_true(qs_screen_scanout(s->screen, w, h, w * 4, QS_PIXMAN_X8R8G8B8,
                                    (const uint8_t *)px, (gsize)w * h * 4,
                                    g_get_monotonic_time(), &error));
    ccfg.screen = s->screen;
    s->channels = qs_channels_new(&ccfg);

    qs_net_config_init(&s->ncfg);
    s->ncfg.listen = g_strdup("127.0.0.1:0");
    s->ncfg.disable_ticketing = TRUE;
    g_assert_true(qs_net_config_validate(&s->ncfg, &error));
    g_assert_no_error(error);
    s->server = qs_server_new(&s->ncfg, qs_channels_server_callbacks(), s->channels, &error);
    g_assert_no_error(error);
    g_assert_nonnull(s->server);
    s->port = g_strdup_printf("%u", qs_server_get_port(s->server, FALSE));
}

static void server_stop(Server *s)
{
    /* The server first: its connections close and free their channels. */
    qs_server_free(s->server);
    qs_channels_free(s->channels);
    for (int i = 0; i < 100 && g_main_context_iteration(NULL, FALSE); i++) {
    }
    qs_net_config_clear(&s->ncfg);
    qs_screen_free(s->screen);
    g_free(s->port);
}

/* Runs `proc` to its end (20 s at most) while serving. */
static void run_client(GSubprocess *proc)
{
    Wait wait = { 0 };
    guint timeout;

    wait.loop = g_main_loop_new(NULL, FALSE);
    g_subprocess_wait_async(proc, NULL, on_exited, &wait);
    timeout = g_timeout_add_seconds(20, on_timeout, &wait);
    g_main_loop_run(wait.loop);
    if (wait.timed_out) {
        g_subprocess_force_exit(proc);
        g_error("the client did not finish within 20 s");
    }
    g_source_remove(timeout);
    g_main_loop_unref(wait.loop);
    g_assert_true(g_subprocess_get_if_exited(proc));
    g_assert_cmpint(g_subprocess_get_exit_status(proc), ==, 0);
}

static void test_spicy_screenshot(void)
{
    g_autofree char *tool = g_find_program_in_path("spicy-screenshot");
    g_autoptr(GError) error = NULL;
    g_autofree char *dir = NULL, *out = NULL;
    g_autoptr(GSubprocess) proc = NULL;
    Server s = { 0 };

    if (!tool) {
        g_test_fail_printf("spicy-screenshot is not installed (spice-client-gtk)");
        return;
    }
    server_start(&s, W, SHOT_H, NULL, NULL);
    dir = g_dir_make_tmp("qs-e2e-XXXXXX", &error);
    g_assert_no_error(error);
    out = g_build_filename(dir, "shot.ppm", NULL);
    proc = g_subprocess_new(G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error, tool,
                            "-h", "127.0.0.1", "-p", s.port, "-o", out, NULL);
    g_assert_no_error(error);
    run_client(proc);
    check_ppm(out, W, SHOT_H);
    server_stop(&s);
    g_unlink(out);
    g_rmdir(dir);
}

/* The "guest" answers the last click by repainting a rectangle, which must
 * reach the client as damage. */
#define RX 40
#define RY 50
#define RW 20
#define RH 10

static void on_input(QsInput *input, gpointer user_data)
{
    Server *s = user_data;
    uint32_t px[RW * RH];
    g_autoptr(GError) error = NULL;

    if (!g_str_has_suffix(fake_input_log(input), "buttons 0;")) {
        return;
    }
    for (uint32_t y = 0; y < RH; y++) {
        for (uint32_t x = 0; x < RW; x++) {
            px[y * RW + x] = pattern(RX + x, RY + y) ^ 0x00ffffff;
        }
    }
    g_assert_true(qs_screen_update(s->screen, RX, RY, RW, RH, RW * 4, QS_PIXMAN_X8R8G8B8,
                                   (const uint8_t *)px, sizeof(px),
                                   g_get_monotonic_time(), &error));
}

static void on_output(GObject *source, GAsyncResult *res, gpointer user_data)
{
    char **out = user_data;
    g_autoptr(GError) error = NULL;

    g_subprocess_communicate_utf8_finish(G_SUBPROCESS(source), res, out, NULL, &error);
    g_assert_no_error(error);
}

/* spice-gtk's own library as the client: display ready (MARK, monitors),
 * cursor shape, mouse mode, keys/mouse arriving at "qemu", and the guest's
 * answer coming back as damage. A large surface takes more than the ACK
 * window's 2 x 20 messages, so the client's ACKs must keep it going. */
static void run_gi_client(uint32_t w, uint32_t h)
{
    const char *script = g_getenv("QS_SPICE_GI_CLIENT");
    g_autoptr(GError) error = NULL;
    g_autoptr(GSubprocess) proc = NULL;
    g_autofree char *out = NULL, *sw = NULL, *sh = NULL, *primary = NULL;
    QsCursor *cursor = fake_cursor_new();
    QsInput *input = fake_input_new(TRUE, 0);
    Server s = { 0 };

    if (!script || !g_file_test("/usr/lib/x86_64-linux-gnu/girepository-1.0/SpiceClientGLib-2.0.typelib",
                                G_FILE_TEST_EXISTS)) {
        g_test_fail_printf("SpiceClientGLib typelib (gir1.2-spiceclientglib-2.0) "
                           "or the client script is missing");
        fake_cursor_free(cursor);
        fake_input_free(input);
        return;
    }
    fake_cursor_define(cursor, 32, 32, 1, 2, 0x80);
    fake_cursor_move(cursor, 10, 10, TRUE);
    server_start(&s, w, h, cursor, input);
    fake_input_set_hook(input, on_input, &s);
    sw = g_strdup_printf("%u", w);
    sh = g_strdup_printf("%u", h);
    proc = g_subprocess_new(G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, "/usr/bin/python3",
                            script, "127.0.0.1", s.port, sw, sh, NULL);
    g_assert_no_error(error);
    g_subprocess_communicate_utf8_async(proc, NULL, NULL, on_output, &out);
    run_client(proc);
    for (int i = 0; i < 100 && !out; i++) {
        g_main_context_iteration(NULL, TRUE);
    }
    g_assert_nonnull(out);
    g_test_message("client said:\n%s", out);
    primary = g_strdup_printf("primary 32 %u %u %u\n", w, h, w * 4);
    g_assert_nonnull(strstr(out, primary));
    g_assert_nonnull(strstr(out, "monitors-notify\n"));
    g_assert_nonnull(strstr(out, "mark 1\n"));
    g_assert_nonnull(strstr(out, "pixels-bad 0\n"));
    g_assert_nonnull(strstr(out, "cursor-set 32 32 1 2\n"));
    g_assert_nonnull(strstr(out, "mouse-mode 2\n"));
    g_assert_nonnull(strstr(out, "input-sent\n"));
    g_assert_nonnull(strstr(out, "update-ok\n"));
    g_test_message("qemu got: %s", fake_input_log(input));
    g_assert_nonnull(strstr(fake_input_log(input), "key +1e;key -1e;key +1c;key -1c;"));
    {
        g_autofree char *abs = g_strdup_printf("abs 100,50 in %ux%u;", w, h);

        g_assert_nonnull(strstr(fake_input_log(input), abs));
    }
    g_assert_nonnull(strstr(fake_input_log(input), "buttons 1;buttons 0;"));
    server_stop(&s);
    fake_cursor_free(cursor);
    fake_input_free(input);
}

static void test_gi_client(void)
{
    run_gi_client(W, H);
}

static void test_gi_client_large(void)
{
    run_gi_client(2560, 1600);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/channels/client/spicy-screenshot", test_spicy_screenshot);
    g_test_add_func("/channels/client/gi-client", test_gi_client);
    g_test_add_func("/channels/client/gi-client-large", test_gi_client_large);
    return g_test_run();
}
