/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Test-only controls: dump the screen, read heat, stall, slow the reader, watchdog off. */

#include "display/qs-test-control.h"

#include <gio/gio.h>
#include <gio/gunixsocketaddress.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MAX_LINE 4096

struct QsTestControl {
    GSocketService *service;
    QsDisplay *display;
    char *path;
};

typedef struct {
    QsTestControl *tc;
    GSocketConnection *conn;
    GDataInputStream *in;
} Client;

/* The PPM follows the reply line on the socket: a confined helper cannot
 * write files, and the tests run it confined. */
static gboolean dump(QsScreen *screen, GString *reply, GByteArray *payload)
{
    QsScreenInfo info;
    g_autoptr(GError) error = NULL;
    g_autofree uint8_t *pixels = NULL;
    g_autofree uint8_t *rgb = NULL;
    g_autofree char *header = NULL;
    QsRect rect;
    size_t n;

    qs_screen_get_info(screen, &info);
    if (!info.enabled) {
        g_string_append(reply, "error no surface");
        return FALSE;
    }
    rect = (QsRect){ 0, 0, (int32_t)info.width, (int32_t)info.height };
    n = (size_t)info.width * info.height;
    pixels = g_malloc(n * 4);
    if (!qs_screen_read(screen, info.serial, &rect, pixels,
                        (size_t)info.width * 4, &error)) {
        g_string_append_printf(reply, "error %s", error->message);
        return FALSE;
    }
    /* B, G, R, X in memory -> R, G, B */
    rgb = g_malloc(n * 3);
    for (size_t i = 0; i < n; i++) {
        rgb[i * 3] = pixels[i * 4 + 2];
        rgb[i * 3 + 1] = pixels[i * 4 + 1];
        rgb[i * 3 + 2] = pixels[i * 4];
    }
    header = g_strdup_printf("P6\n%u %u\n255\n", info.width, info.height);
    g_byte_array_append(payload, (const guint8 *)header, strlen(header));
    g_byte_array_append(payload, rgb, n * 3);
    g_string_append_printf(reply, "ok %ux%u serial=%" G_GUINT64_FORMAT
                           " bytes=%u", info.width, info.height, info.serial,
                           payload->len);
    return TRUE;
}

/* frames= is qemu's frame count as this snapshot is taken: the frame that
 * made a block hot is at most that one, whatever the asker's delays. */
static void heat(QsConsole *console, GString *reply)
{
    g_autoptr(QsScreenHeat) h = qs_screen_heat_snapshot(
        qs_console_get_screen(console), g_get_monotonic_time());
    QsConsoleStats s;
    size_t n;

    if (!h) {
        g_string_append(reply, "error no surface");
        return;
    }
    qs_console_get_stats(console, &s);
    g_string_append_printf(reply,
        "ok serial=%" G_GUINT64_FORMAT " frames=%" G_GUINT64_FORMAT
        " size=%ux%u blocks=%ux%u n_hot=%u box=%d,%d,%d,%d hot=", h->serial,
        s.scanouts + s.updates + s.scanout_maps + s.update_maps, h->width, h->height, h->blocks_x,
        h->blocks_y, h->n_hot, h->hot_blocks.x, h->hot_blocks.y,
        h->hot_blocks.width, h->hot_blocks.height);
    n = (size_t)h->blocks_x * h->blocks_y;
    for (size_t i = 0, k = 0; i < n; i++) {
        if (h->hot[i]) {
            g_string_append_printf(reply, "%s%zu", k++ ? "," : "", i);
        }
    }
}

static void execute(QsTestControl *tc, const char *line, GString *reply,
                    GByteArray *payload)
{
    QsConsole *console = qs_display_get_console(tc->display);
    QsInput *input = qs_console_get_input(console);
    g_auto(GStrv) argv = g_strsplit(line, " ", 2);
    gint64 x = 0, y = 0;

    if (!argv[0]) {
        g_string_append(reply, "error empty command");
    } else if (g_str_equal(argv[0], "dump") && !argv[1]) {
        dump(qs_console_get_screen(console), reply, payload);
    } else if (g_str_equal(argv[0], "heat")) {
        heat(console, reply);
    } else if (g_str_equal(argv[0], "stall") && argv[1]) {
        guint64 s = 0;

        if (!g_ascii_string_to_unsigned(argv[1], 10, 1, 60, &s, NULL)) {
            g_string_append(reply, "error stall takes 1..60 seconds");
        } else if (!qs_console_stall_listener(console, (unsigned)s)) {
            g_string_append(reply, "error no listener");
        } else {
            g_string_append(reply, "ok");
        }
    } else if (g_str_equal(argv[0], "slow-reader") && argv[1]) {
        g_auto(GStrv) args = g_strsplit(argv[1], " ", 2);
        guint64 ms = 0, s = 0;

        if (!args[0] || !args[1] ||
            !g_ascii_string_to_unsigned(args[0], 10, 1, 1000, &ms, NULL) ||
            !g_ascii_string_to_unsigned(args[1], 10, 1, 60, &s, NULL)) {
            g_string_append(reply, "error slow-reader takes 1..1000 ms and 1..60 seconds");
        } else if (!qs_console_slow_reader(console, (unsigned)ms, (unsigned)s)) {
            g_string_append(reply, "error no listener");
        } else {
            g_string_append(reply, "ok");
        }
    } else if (g_str_equal(argv[0], "watchdog") && argv[1] &&
               (g_str_equal(argv[1], "on") || g_str_equal(argv[1], "off"))) {
        qs_console_set_watchdog(console, g_str_equal(argv[1], "on"));
        g_string_append(reply, "ok");
    } else if (g_str_equal(argv[0], "key") && argv[1]) {
        char *end = NULL;
        guint64 qnum = g_ascii_strtoull(argv[1], &end, 0);

        if (end == argv[1] || *end || qnum < 1 || qnum > 0xff) {
            g_string_append(reply, "error key takes a qnum 1..255");
        } else {
            qs_input_key(input, (uint32_t)qnum, TRUE);
            qs_input_key(input, (uint32_t)qnum, FALSE);
            g_string_append(reply, "ok");
        }
    } else if (g_str_equal(argv[0], "button") && argv[1]) {
        guint64 b = 0;

        if (!g_ascii_string_to_unsigned(argv[1], 10, 0, QS_BUTTON_COUNT - 1, &b,
                                        NULL)) {
            g_string_append(reply, "error button takes 0..6");
        } else {
            qs_input_button(input, (uint32_t)b, TRUE);
            qs_input_button(input, (uint32_t)b, FALSE);
            g_string_append(reply, "ok");
        }
    } else if (g_str_equal(argv[0], "abs") && argv[1] &&
               sscanf(argv[1], "%" G_GINT64_FORMAT " %" G_GINT64_FORMAT,
                      &x, &y) == 2) {
        uint32_t w, h;

        qs_console_get_size(console, &w, &h);
        qs_input_motion_abs(input, x, y, w, h);
        g_string_append(reply, "ok");
    } else if (g_str_equal(argv[0], "rel") && argv[1] &&
               sscanf(argv[1], "%" G_GINT64_FORMAT " %" G_GINT64_FORMAT,
                      &x, &y) == 2) {
        qs_input_motion_rel(input, (int32_t)CLAMP(x, -1000, 1000),
                            (int32_t)CLAMP(y, -1000, 1000));
        g_string_append(reply, "ok");
    } else if (g_str_equal(argv[0], "input")) {
        g_string_append_printf(reply, "ok absolute=%d modifiers=%u",
                               qs_input_is_absolute(input) ? 1 : 0,
                               qs_input_get_modifiers(input));
    } else if (g_str_equal(argv[0], "stats")) {
        QsConsoleStats s;

        qs_console_get_stats(console, &s);
        g_string_append_printf(reply,
            "ok registrations=%" G_GUINT64_FORMAT
            " watchdog_resets=%" G_GUINT64_FORMAT
            " listener_losses=%" G_GUINT64_FORMAT
            " scanouts=%" G_GUINT64_FORMAT " updates=%" G_GUINT64_FORMAT
            " scanout_maps=%" G_GUINT64_FORMAT
            " update_maps=%" G_GUINT64_FORMAT " dropped=%" G_GUINT64_FORMAT
            " early=%" G_GUINT64_FORMAT
            " backlog=%" G_GUINT64_FORMAT, s.registrations,
            s.watchdog_resets, s.listener_losses, s.scanouts, s.updates,
            s.scanout_maps, s.update_maps, s.dropped, s.early, s.backlog);
    } else {
        g_string_append_printf(reply, "error unknown command '%s'", argv[0]);
    }
}

static void client_free(Client *c)
{
    g_object_unref(c->in);
    g_object_unref(c->conn);
    g_free(c);
}

static void on_line(GObject *source, GAsyncResult *res, gpointer data)
{
    Client *c = data;
    g_autoptr(GError) error = NULL;
    g_autoptr(GString) reply = g_string_new(NULL);
    g_autoptr(GByteArray) payload = g_byte_array_new();
    gsize len = 0;
    g_autofree char *line = g_data_input_stream_read_line_finish(
        G_DATA_INPUT_STREAM(source), res, &len, &error);
    GOutputStream *out;

    if (!line || len > MAX_LINE) {
        client_free(c);
        return;
    }
    execute(c->tc, line, reply, payload);
    g_string_append_c(reply, '\n');
    out = g_io_stream_get_output_stream(G_IO_STREAM(c->conn));
    /* Test-only and local: a blocking write of the reply and its payload. */
    if (!g_output_stream_write_all(out, reply->str, reply->len, NULL, NULL,
                                   NULL) ||
        !g_output_stream_write_all(out, payload->data, payload->len, NULL,
                                   NULL, NULL)) {
        client_free(c);
        return;
    }
    g_data_input_stream_read_line_async(c->in, G_PRIORITY_DEFAULT, NULL,
                                        on_line, c);
}

static gboolean on_incoming(GSocketService *service, GSocketConnection *conn,
                            GObject *source, gpointer data)
{
    Client *c = g_new0(Client, 1);

    (void)service, (void)source;
    c->tc = data;
    c->conn = g_object_ref(conn);
    c->in = g_data_input_stream_new(
        g_io_stream_get_input_stream(G_IO_STREAM(conn)));
    g_data_input_stream_read_line_async(c->in, G_PRIORITY_DEFAULT, NULL,
                                        on_line, c);
    return TRUE;
}

QsTestControl *qs_test_control_new(const char *path, QsDisplay *display,
                                   GError **error)
{
    g_autoptr(QsTestControl) tc = g_new0(QsTestControl, 1);
    g_autoptr(GSocketAddress) addr = g_unix_socket_address_new(path);

    tc->display = display;
    tc->path = g_strdup(path);
    tc->service = g_socket_service_new();
    unlink(path);
    if (!g_socket_listener_add_address(G_SOCKET_LISTENER(tc->service), addr,
                                       G_SOCKET_TYPE_STREAM,
                                       G_SOCKET_PROTOCOL_DEFAULT, NULL, NULL,
                                       error)) {
        g_prefix_error(error, "test control socket '%s': ", path);
        return NULL;
    }
    g_signal_connect(tc->service, "incoming", G_CALLBACK(on_incoming), tc);
    g_socket_service_start(tc->service);
    g_message("test controls on '%s'", path);
    return g_steal_pointer(&tc);
}

void qs_test_control_free(QsTestControl *tc)
{
    if (!tc) {
        return;
    }
    if (tc->service) {
        g_socket_service_stop(tc->service);
        g_socket_listener_close(G_SOCKET_LISTENER(tc->service));
        g_object_unref(tc->service);
        unlink(tc->path);
    }
    g_free(tc->path);
    g_free(tc);
}
