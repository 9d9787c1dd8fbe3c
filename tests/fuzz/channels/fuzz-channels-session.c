/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: client message sequences through a whole session (all four channels, fake peers). */
#include "channels/qs-channels.h"
#include "encode/qs-encode-queue.h"
#include "../../unit/channels/fake-peers.h"

#include <spice/enums.h>
#include <spice/protocol.h>

/*
 * Input: records of {u8 op; u16 type (LE); u8 len; u8 body[len]}. op % 8:
 * 0-3 a client message on main/display/inputs/cursor; 4 the screen changes;
 * 5 qemu's mouse flips absolute/relative; 6 the display's send queue fills
 * or drains; 7 the guest cursor moves or changes shape. The main loop runs
 * after each record, as net would between reads.
 */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static QsConn *link_channel(QsChannels *hub, guint8 type, guint32 conn_id, guint32 caps)
{
    const QsServerCallbacks *cb = qs_channels_server_callbacks();
    QsConn *conn = fake_conn_new(type, 0, conn_id, caps);
    guint32 server_caps[QS_SERVER_MAX_CHANNEL_CAPS];
    guint n_caps;
    guint32 session_id = 0;

    if (cb->prepare(qs_conn_get_link_info(conn), server_caps, &n_caps, hub) != SPICE_LINK_ERR_OK ||
        cb->authorize(qs_conn_get_link_info(conn), &session_id, hub) != SPICE_LINK_ERR_OK) {
        __builtin_trap();       /* the setup links are all valid */
    }
    fake_conn_set_session_id(conn, session_id);
    cb->attach(qs_conn_ref(conn), hub);
    return conn;
}

/*
 * The session logs two messages an input (no agent for the client; the
 * display's summary at its end), and GLib's writer converts each to the
 * locale's charset (an iconv_open, 32 KiB, each time) and writes it: with
 * the sanitizer's allocator that was the biggest allocation of an input.
 * Dropped here; warnings and worse still go out (and fail the run).
 */
static GLogWriterOutput quiet_writer(GLogLevelFlags level, const GLogField *fields,
                                     gsize n_fields, gpointer data)
{
    if (level & (G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO | G_LOG_LEVEL_DEBUG)) {
        return G_LOG_WRITER_HANDLED;
    }
    return g_log_writer_default(level, fields, n_fields, data);
}

static void paint(QsScreen *screen, uint32_t w, uint32_t h, uint8_t salt)
{
    g_autofree uint8_t *px = g_malloc((gsize)w * h * 4);

    for (gsize i = 0; i < (gsize)w * h * 4; i++) {
        px[i] = (uint8_t)(i * 31 + salt);
    }
    qs_screen_scanout(screen, w, h, w * 4, QS_PIXMAN_X8R8G8B8, px, (gsize)w * h * 4,
                      g_get_monotonic_time(), NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    QsScreen *screen = qs_screen_new();
    QsCursor *cursor = fake_cursor_new();
    QsInput *input = fake_input_new(TRUE, 0);
    /* Encodes on this thread: no thread made per input, and the input's
     * work all done when its loop is idle. */
    g_autoptr(QsEncodeQueue) encodes = qs_encode_queue_new_inline();
    QsChannelsConfig cfg = { .vm_name = "fuzz", .screen = screen, .cursor = cursor,
                             .input = input, .encodes = encodes };
    QsChannels *hub;
    QsConn *conns[4];
    size_t pos = 0;
    gboolean absolute = TRUE;
    static gboolean quiet;

    if (!quiet) {
        g_log_set_writer_func(quiet_writer, NULL, NULL);
        quiet = TRUE;
    }

    paint(screen, 48, 32, 0);
    fake_cursor_define(cursor, 8, 8, 1, 1, 0x7f);
    hub = qs_channels_new(&cfg);
    conns[0] = link_channel(hub, SPICE_CHANNEL_MAIN, 0, 1u << SPICE_MAIN_CAP_NAME_AND_UUID);
    conns[1] = link_channel(hub, SPICE_CHANNEL_DISPLAY, qs_channels_get_session_id(hub),
                            (1u << SPICE_DISPLAY_CAP_MONITORS_CONFIG) |
                            (1u << SPICE_DISPLAY_CAP_LZ4_COMPRESSION));
    conns[2] = link_channel(hub, SPICE_CHANNEL_INPUTS, qs_channels_get_session_id(hub), 0);
    conns[3] = link_channel(hub, SPICE_CHANNEL_CURSOR, qs_channels_get_session_id(hub), 0);

    while (pos + 4 <= size) {
        uint8_t op = data[pos] % 8;
        uint16_t type = (uint16_t)(data[pos + 1] | data[pos + 2] << 8);
        size_t len = MIN((size_t)data[pos + 3], size - pos - 4);
        const uint8_t *body = data + pos + 4;

        pos += 4 + len;
        switch (op) {
        case 0: case 1: case 2: case 3:
            fake_conn_deliver(conns[op], type, body, len);
            break;
        case 4:
            paint(screen, 16 + (type & 63), 16 + ((type >> 6) & 63), (uint8_t)(type >> 12));
            break;
        case 5:
            absolute = !absolute;
            fake_input_set_absolute(input, absolute);
            break;
        case 6:
            if (type & 1) {
                fake_conn_set_queued(conns[1], QS_CONN_DEFAULT_LOW_WATER);
            } else {
                fake_conn_drain(conns[1]);
            }
            break;
        default:
            if (type & 1) {
                fake_cursor_define(cursor, 1 + (type & 31), 1 + ((type >> 5) & 31),
                                   type >> 10, type >> 12, (uint8_t)type);
            } else {
                fake_cursor_move(cursor, (int16_t)type, (int16_t)(type >> 3), type & 2);
            }
            break;
        }
        fake_loop_run_pending();
    }

    qs_channels_free(hub);
    fake_loop_run_pending();
    for (guint i = 0; i < G_N_ELEMENTS(conns); i++) {
        qs_conn_unref(conns[i]);
    }
    qs_screen_free(screen);
    fake_cursor_free(cursor);
    fake_input_free(input);
    return 0;
}
