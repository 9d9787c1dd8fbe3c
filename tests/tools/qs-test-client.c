/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qs-test-client: a headless SPICE client on spice-client-glib for tests and benchmarks. */
#include "qs-tc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static const char summary[] =
    "Commands (run in order, after the display is up):\n"
    "  screenshot OUT        write the primary surface (PPM P6; PNG if OUT ends in .png)\n"
    "                        after --settle MS without display updates\n"
    "  info                  print surface, channels, mouse mode, MONITORS_CONFIG as JSON\n"
    "  key CODE...           press and release AT set-1 scancodes (0x1e = A)\n"
    "  click X Y [BUTTON]    absolute pointer position (client mouse mode), press, release\n"
    "  keylat                key-to-pixel latency over --rect, JSON line per sample + summary\n"
    "  watch                 count display activity for --seconds, JSON\n"
    "  sleep MS              keep the session for MS milliseconds\n"
    "  wait-file PATH MS     keep the session until PATH exists, at most MS milliseconds\n"
    "\n"
    "Exit status: 0 ok, 2 usage, 3 connect, 4 link refused, 5 auth (ticket), 6 TLS,\n"
    "7 disconnected/IO, 8 timeout, 9 expectation failed, 10 output file, 11 unsupported.";

#define QS_TC_MAX_KEYS 64

typedef struct {
    char *host;
    char *port;
    char *tls_port;
    char *ca_file;
    char *host_subject;
    char *ticket_file;
    char *secure_channels;
    char *expect_size;
    char *rect;
    int timeout_s;
    int settle_ms;
    int count;
    int interval_ms;
    int sample_timeout_ms;
    char *scancode;
    char *video_codecs;
    double seconds;
    int display_id;
    gboolean audio;
    gboolean verbose;
    gboolean no_lz4;
    gboolean no_display_caps;
    char *add_client;
    gboolean add_client_bus;
    gboolean skipauth;
} Options;

static void options_clear(Options *o)
{
    g_free(o->host);
    g_free(o->port);
    g_free(o->tls_port);
    g_free(o->ca_file);
    g_free(o->host_subject);
    g_free(o->ticket_file);
    g_free(o->secure_channels);
    g_free(o->expect_size);
    g_free(o->rect);
    g_free(o->scancode);
    g_free(o->video_codecs);
    g_free(o->add_client);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Options, options_clear)

/* Accepts decimal and 0x-prefixed hex; FALSE unless the whole string is a number in range. */
static gboolean parse_uint(const char *s, guint64 max, guint64 *out)
{
    char *end;
    guint64 v;

    if (!s || !*s || *s == '-' || *s == '+')
        return FALSE;
    errno = 0;
    v = g_ascii_strtoull(s, &end, 0);
    if (errno || *end || v > max)
        return FALSE;
    *out = v;
    return TRUE;
}

static gboolean parse_ints(const char *s, const char *sep, int n, int *out)
{
    g_auto(GStrv) parts = g_strsplit(s, sep, -1);

    if ((int)g_strv_length(parts) != n)
        return FALSE;
    for (int i = 0; i < n; i++) {
        guint64 v;
        if (!parse_uint(parts[i], 65535, &v))
            return FALSE;
        out[i] = (int)v;
    }
    return TRUE;
}

/* The ticket comes from a file so it never shows in ps or in test logs. */
static char *read_ticket(const char *path, GError **error)
{
    g_autofree char *data = NULL;
    gsize len = 0;

    if (!g_file_get_contents(path, &data, &len, error))
        return NULL;
    if (strlen(data) != len) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s contains a NUL byte", path);
        return NULL;
    }
    while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == '\r'))
        data[--len] = '\0';
    return g_steal_pointer(&data);
}

static int usage(const char *fmt, const char *arg)
{
    g_printerr("error: usage: ");
    g_printerr(fmt, arg);
    g_printerr(" (see --help)\n");
    return QS_TC_EXIT_USAGE;
}

/* Checks the command list before connecting, so a typo costs no connection. */
static gboolean has_command(char **argv, int argc, const char *name)
{
    for (int i = 1; i < argc; i++)
        if (g_str_equal(argv[i], name))
            return TRUE;
    return FALSE;
}

static int check_commands(char **argv, int argc)
{
    guint64 v;

    for (int i = 1; i < argc; i++) {
        const char *cmd = argv[i];

        if (g_str_equal(cmd, "screenshot")) {
            if (++i >= argc)
                return usage("%s needs an output file", cmd);
        } else if (g_str_equal(cmd, "info") || g_str_equal(cmd, "keylat") ||
                   g_str_equal(cmd, "watch")) {
            continue;
        } else if (g_str_equal(cmd, "key")) {
            int n = 0;
            while (i + 1 < argc && parse_uint(argv[i + 1], 0xffff, &v)) {
                i++;
                n++;
            }
            if (!n || n > QS_TC_MAX_KEYS)
                return usage("%s needs 1 to 64 scancodes", cmd);
        } else if (g_str_equal(cmd, "click")) {
            if (i + 2 >= argc || !parse_uint(argv[i + 1], 65535, &v) ||
                !parse_uint(argv[i + 2], 65535, &v))
                return usage("%s needs X Y [BUTTON]", cmd);
            i += 2;
            if (i + 1 < argc && parse_uint(argv[i + 1], 3, &v))
                i++;
        } else if (g_str_equal(cmd, "sleep")) {
            if (++i >= argc || !parse_uint(argv[i], 3600000, &v))
                return usage("%s needs milliseconds", cmd);
        } else if (g_str_equal(cmd, "wait-file")) {
            if (i + 2 >= argc || !parse_uint(argv[i + 2], 3600000, &v))
                return usage("%s needs PATH and milliseconds", cmd);
            i += 2;
        } else {
            return usage("unknown command '%s'", cmd);
        }
    }
    return argc > 1 ? QS_TC_EXIT_OK : usage("%s", "no command given");
}

/* The session keeps running (display updates are drawn) while it waits:
 * a harness creates PATH at the moment it wants the next command run (the
 * benchmark: a screenshot a set time after it stopped the guest). Polled
 * every 5 ms. */
static int wait_file(QsTc *tc, const char *path, gint64 timeout_us)
{
    gint64 deadline = g_get_monotonic_time() + timeout_us;

    while (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        if (tc->fail_status)
            return tc->fail_status;
        if (g_get_monotonic_time() >= deadline) {
            qs_tc_fail(tc, QS_TC_EXIT_TIMEOUT, "wait-file: %s did not appear in %" G_GINT64_FORMAT
                       " ms", path, timeout_us / 1000);
            return tc->fail_status;
        }
        qs_tc_wait(tc, NULL, NULL, 5000);
    }
    return QS_TC_EXIT_OK;
}

static int run_commands(QsTc *tc, const Options *o, char **argv, int argc)
{
    int rc = QS_TC_EXIT_OK;
    guint64 v;

    for (int i = 1; i < argc && rc == QS_TC_EXIT_OK && !tc->fail_status; i++) {
        const char *cmd = argv[i];

        if (g_str_equal(cmd, "screenshot")) {
            rc = qs_tc_cmd_screenshot(tc, argv[++i], o->settle_ms);
        } else if (g_str_equal(cmd, "info")) {
            rc = qs_tc_cmd_info(tc);
        } else if (g_str_equal(cmd, "key")) {
            guint codes[QS_TC_MAX_KEYS];
            guint n = 0;

            while (i + 1 < argc && parse_uint(argv[i + 1], 0xffff, &v)) {
                i++;
                if (n < G_N_ELEMENTS(codes))
                    codes[n++] = (guint)v;
            }
            rc = qs_tc_cmd_key(tc, codes, n);
        } else if (g_str_equal(cmd, "click")) {
            int x, y, button = SPICE_MOUSE_BUTTON_LEFT;

            parse_uint(argv[++i], 65535, &v);
            x = (int)v;
            parse_uint(argv[++i], 65535, &v);
            y = (int)v;
            if (i + 1 < argc && parse_uint(argv[i + 1], 3, &v)) {
                i++;
                button = (int)v;
            }
            rc = qs_tc_cmd_click(tc, x, y, button);
        } else if (g_str_equal(cmd, "keylat")) {
            QsTcKeylatOpts k = {
                .count = o->count,
                .interval_ms = o->interval_ms,
                .sample_timeout_ms = o->sample_timeout_ms,
            };
            int r[4];

            if (!o->rect || !parse_ints(o->rect, ",", 4, r))
                return usage("%s needs --rect X,Y,W,H", cmd);
            k.x = r[0];
            k.y = r[1];
            k.w = r[2];
            k.h = r[3];
            if (!parse_uint(o->scancode, 0xffff, &v))
                return usage("bad --scancode '%s'", o->scancode);
            k.scancode = (guint)v;
            rc = qs_tc_cmd_keylat(tc, &k);
        } else if (g_str_equal(cmd, "watch")) {
            int r[4];

            if (o->rect && !parse_ints(o->rect, ",", 4, r))
                return usage("bad --rect '%s'", o->rect);
            rc = qs_tc_cmd_watch(tc, o->seconds, o->rect ? r : NULL);
        } else if (g_str_equal(cmd, "sleep")) {
            parse_uint(argv[++i], 3600000, &v);
            qs_tc_wait(tc, NULL, NULL, (gint64)v * 1000);
        } else if (g_str_equal(cmd, "wait-file")) {
            const char *path = argv[++i];

            parse_uint(argv[++i], 3600000, &v);
            rc = wait_file(tc, path, (gint64)v * 1000);
        }
    }
    return tc->fail_status ? tc->fail_status : rc;
}

static int check_expect_size(QsTc *tc, const char *expect)
{
    int wh[2];

    if (!parse_ints(expect, "x", 2, wh)) {
        qs_tc_fail(tc, QS_TC_EXIT_USAGE, "usage: --expect-size wants WxH, got '%s'", expect);
        return tc->fail_status;
    }
    if (tc->primary_width != wh[0] || tc->primary_height != wh[1]) {
        qs_tc_fail(tc, QS_TC_EXIT_EXPECT, "expectation failed: surface is %dx%d, expected %dx%d",
                   tc->primary_width, tc->primary_height, wh[0], wh[1]);
        return tc->fail_status;
    }
    return QS_TC_EXIT_OK;
}

/* "mjpeg,h264" -> SPICE_VIDEO_CODEC_TYPE_*, or NULL for a name not known. */
static GArray *parse_video_codecs(const char *list)
{
    static const struct {
        const char *name;
        gint type;
    } names[] = {
        { "mjpeg", SPICE_VIDEO_CODEC_TYPE_MJPEG }, { "h264", SPICE_VIDEO_CODEC_TYPE_H264 },
        { "vp8", SPICE_VIDEO_CODEC_TYPE_VP8 }, { "vp9", SPICE_VIDEO_CODEC_TYPE_VP9 },
        { "h265", SPICE_VIDEO_CODEC_TYPE_H265 },
    };
    g_auto(GStrv) parts = g_strsplit(list, ",", -1);
    g_autoptr(GArray) out = g_array_new(FALSE, FALSE, sizeof(gint));

    for (guint i = 0; parts[i]; i++) {
        guint k = 0;

        while (k < G_N_ELEMENTS(names) && g_strcmp0(names[k].name, parts[i]) != 0) {
            k++;
        }
        if (k == G_N_ELEMENTS(names)) {
            return NULL;
        }
        g_array_append_val(out, names[k].type);
    }
    return out->len ? g_steal_pointer(&out) : NULL;
}

int main(int argc, char **argv)
{
    g_auto(Options) o = {
        .timeout_s = 30,
        .settle_ms = 300,
        .count = 10,
        .interval_ms = 200,
        .sample_timeout_ms = 2000,
        .seconds = 5.0,
    };
    GOptionEntry entries[] = {
        { "host", 0, 0, G_OPTION_ARG_STRING, &o.host, "Server host (default 127.0.0.1)", "H" },
        { "port", 0, 0, G_OPTION_ARG_STRING, &o.port, "Plain port", "P" },
        { "tls-port", 0, 0, G_OPTION_ARG_STRING, &o.tls_port, "TLS port", "P" },
        { "ca-file", 0, 0, G_OPTION_ARG_FILENAME, &o.ca_file, "CA certificate for TLS", "F" },
        { "host-subject", 0, 0, G_OPTION_ARG_STRING, &o.host_subject, "Expected certificate subject", "S" },
        { "secure-channels", 0, 0, G_OPTION_ARG_STRING, &o.secure_channels,
          "Channels forced onto TLS (all, main, display, ...)", "LIST" },
        { "ticket-file", 0, 0, G_OPTION_ARG_FILENAME, &o.ticket_file, "File holding the ticket (password)", "F" },
        { "timeout", 0, 0, G_OPTION_ARG_INT, &o.timeout_s, "Bound of every wait, seconds (default 30)", "S" },
        { "settle", 0, 0, G_OPTION_ARG_INT, &o.settle_ms, "screenshot: quiet period before capture (default 300)", "MS" },
        { "expect-size", 0, 0, G_OPTION_ARG_STRING, &o.expect_size, "Fail (status 9) unless the surface is WxH", "WxH" },
        { "rect", 0, 0, G_OPTION_ARG_STRING, &o.rect, "keylat, watch: watched rectangle", "X,Y,W,H" },
        { "count", 0, 0, G_OPTION_ARG_INT, &o.count, "keylat: samples (default 10)", "N" },
        { "interval", 0, 0, G_OPTION_ARG_INT, &o.interval_ms, "keylat: ms between presses (default 200)", "MS" },
        { "sample-timeout", 0, 0, G_OPTION_ARG_INT, &o.sample_timeout_ms, "keylat: give up on a sample after MS (default 2000)", "MS" },
        { "scancode", 0, 0, G_OPTION_ARG_STRING, &o.scancode, "keylat: AT set-1 scancode (default 0x1e)", "C" },
        { "seconds", 0, 0, G_OPTION_ARG_DOUBLE, &o.seconds, "watch: window length (default 5)", "S" },
        { "display", 0, 0, G_OPTION_ARG_INT, &o.display_id,
          "Display channel id whose surface ready, info, screenshot, watch, ... use (default 0)", "ID" },
        { "audio", 0, 0, G_OPTION_ARG_NONE, &o.audio, "Also open playback/record channels", NULL },
        { "video-codecs", 0, 0, G_OPTION_ARG_STRING, &o.video_codecs,
          "Tell the server these stream codecs in this order of preference (mjpeg, h264, "
          "vp8, vp9, h265; comma list)", "LIST" },
        { "no-lz4", 0, 0, G_OPTION_ARG_NONE, &o.no_lz4,
          "Display channels do not announce LZ4 (through a relay that strips it; plain --port only)", NULL },
        { "no-display-caps", 0, 0, G_OPTION_ARG_NONE, &o.no_display_caps,
          "Display channels announce no capability, as behind a proxy that forwards none "
          "(through a relay; plain --port only)", NULL },
        { "no-audio", 0, G_OPTION_FLAG_REVERSE, G_OPTION_ARG_NONE, &o.audio, "Do not open audio channels (default)", NULL },
        { "add-client", 0, 0, G_OPTION_ARG_STRING, &o.add_client,
          "Get every channel's socket by handing its other end to qemu-spice's "
          "org.qemuspice.Helper1.AddClient at the D-Bus address ADDR (its control socket, "
          "unix:path=...), as virt-viewer through virDomainOpenGraphicsFD", "ADDR" },
        { "add-client-bus", 0, 0, G_OPTION_ARG_NONE, &o.add_client_bus,
          "--add-client's ADDR is a message bus: call the name org.qemuspice.Helper1", NULL },
        { "skipauth", 0, 0, G_OPTION_ARG_NONE, &o.skipauth,
          "--add-client: ask AddClient to link without a ticket", NULL },
        { "verbose", 'v', 0, G_OPTION_ARG_NONE, &o.verbose, "Log channel events and spice-gtk debug output", NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    g_autoptr(GOptionContext) ctx = g_option_context_new("COMMAND [ARGS] [COMMAND [ARGS]...]");
    g_autoptr(GError) err = NULL;
    g_autofree char *ticket = NULL;
    QsTc tc;
    int rc;

    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_summary(ctx, summary);
    if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
        g_printerr("error: usage: %s\n", err->message);
        return QS_TC_EXIT_USAGE;
    }
    if (!o.port && !o.tls_port && !o.add_client)
        return usage("%s", "--port, --tls-port or --add-client is required");
    if ((o.add_client_bus || o.skipauth) && !o.add_client)
        return usage("%s", "--add-client-bus and --skipauth go with --add-client");
    if (o.add_client && (o.no_lz4 || o.no_display_caps))
        return usage("%s", "--add-client does not go through the relay of --no-lz4 and "
                     "--no-display-caps");
    if (o.timeout_s < 1 || o.timeout_s > 3600 || o.settle_ms < 0 || o.count < 1 ||
        o.count > 100000 || o.interval_ms < 0 || o.sample_timeout_ms < 1 ||
        !(o.seconds > 0 && o.seconds <= 86400) || o.display_id < 0 || o.display_id > 255)
        return usage("%s", "a numeric option is out of range");
    if (!o.scancode)
        o.scancode = g_strdup("0x1e");
    rc = check_commands(argv, argc);
    if (rc)
        return rc;
    if (o.ticket_file && !(ticket = read_ticket(o.ticket_file, &err))) {
        g_printerr("error: usage: ticket file: %s\n", err->message);
        return QS_TC_EXIT_USAGE;
    }

    if (o.no_lz4 || o.no_display_caps) {
        g_autofree char *relay_port = NULL;

        if (o.tls_port || !o.port)
            return usage("%s", "--no-lz4 and --no-display-caps work on a plain --port only "
                         "(the relay cannot read a TLS link)");
        relay_port = qs_tc_relay_start(o.host ? o.host : "127.0.0.1", o.port,
                                       o.no_display_caps ? 0xffffffffu
                                                         : 1u << SPICE_DISPLAY_CAP_LZ4_COMPRESSION,
                                       &err);
        if (!relay_port) {
            g_printerr("error: %s\n", err->message);
            return QS_TC_EXIT_INTERNAL;
        }
        g_free(o.port);
        g_free(o.host);
        o.port = g_steal_pointer(&relay_port);
        o.host = g_strdup("127.0.0.1");
    }

    qs_tc_init(&tc);
    if (o.video_codecs && !(tc.video_codecs = parse_video_codecs(o.video_codecs))) {
        qs_tc_clear(&tc);
        return usage("--video-codecs: '%s' is not a comma list of mjpeg, h264, vp8, vp9, h265",
                     o.video_codecs);
    }
    tc.timeout_s = o.timeout_s;
    tc.verbose = o.verbose;
    tc.want_audio = o.audio;
    tc.display_id = o.display_id;
    if (o.add_client && !qs_tc_add_client_open(&tc, o.add_client, o.add_client_bus, o.skipauth,
                                               &err)) {
        g_printerr("error: %s\n", err->message);
        qs_tc_clear(&tc);
        return QS_TC_EXIT_CONNECT;
    }
    qs_tc_log_install(&tc);
    /* the link verdict is only in spice-gtk's debug log while connecting */
    qs_tc_log_capture(&tc, TRUE);
    if (qs_tc_connect(&tc, o.host ? o.host : "127.0.0.1", o.port, o.tls_port, o.ca_file,
                      o.host_subject, ticket, o.secure_channels) &&
        qs_tc_wait_ready(&tc)) {
        /* a stream opened while connecting is still one watch must report */
        if (!has_command(argv, argc, "watch"))
            qs_tc_log_capture(&tc, FALSE);
        if (!o.expect_size || check_expect_size(&tc, o.expect_size) == QS_TC_EXIT_OK)
            run_commands(&tc, &o, argv, argc);
    }
    rc = tc.fail_status;
    if (rc)
        g_printerr("error: %s\n", tc.fail_msg);
    if (ticket)
        memset(ticket, 0, strlen(ticket));
    qs_tc_clear(&tc);
    return rc;
}
