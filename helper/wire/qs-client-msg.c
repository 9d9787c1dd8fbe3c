/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Length-checked parsers of every client message the four channels accept. */
#include "wire/qs-client-msg.h"
#include "wire/qs-wire.h"

#include <spice/enums.h>

G_DEFINE_QUARK(qs-channel-error-quark, qs_channel_error)

/* A SPICE_MSGC_INPUTS_KEY_SCANCODE carries a handful of bytes (Pause is the
 * longest sequence, 6); more is not a keyboard. */
#define SCANCODE_MAX 64

static gboolean need(const char *channel, const char *name, size_t size,
                     size_t min, GError **error)
{
    if (size < min) {
        g_set_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_MALFORMED,
                    "%s channel: %s message of %zu bytes, needs %zu",
                    channel, name, size, min);
        return FALSE;
    }
    return TRUE;
}

static void set_bytes(QsClientMsg *msg, const uint8_t *data, size_t size)
{
    msg->u.bytes.data = data;
    msg->u.bytes.len = (uint32_t)size;
}

static gboolean unknown(const char *channel, uint16_t type, GError **error)
{
    g_set_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_UNKNOWN_TYPE,
                "%s channel: unknown client message type %u", channel, type);
    return FALSE;
}

/* Returns TRUE when `type` is a base message (parsed or failed: see *ok). */
static gboolean parse_base(const char *ch, uint16_t type, const uint8_t *data,
                           size_t size, QsClientMsg *msg, gboolean *ok,
                           GError **error)
{
    switch (type) {
    case SPICE_MSGC_ACK_SYNC:
        if ((*ok = need(ch, "ACK_SYNC", size, 4, error))) {
            msg->u.generation = qs_wire_get_u32(data);
        }
        return TRUE;
    case SPICE_MSGC_ACK:
    case SPICE_MSGC_MIGRATE_FLUSH_MARK:
        *ok = TRUE;
        return TRUE;
    case SPICE_MSGC_PONG:
        if ((*ok = need(ch, "PONG", size, 12, error))) {
            msg->u.pong.id = qs_wire_get_u32(data);
            msg->u.pong.timestamp = qs_wire_get_u64(data + 4);
        }
        return TRUE;
    case SPICE_MSGC_MIGRATE_DATA:
        set_bytes(msg, data, size);
        *ok = TRUE;
        return TRUE;
    case SPICE_MSGC_DISCONNECTING:
        if ((*ok = need(ch, "DISCONNECTING", size, 12, error))) {
            msg->u.disconnecting.timestamp = qs_wire_get_u64(data);
            msg->u.disconnecting.reason = qs_wire_get_u32(data + 8);
        }
        return TRUE;
    default:
        return FALSE;
    }
}

#define BASE_OR_RETURN(ch)                                                  \
    do {                                                                    \
        gboolean ok_ = FALSE;                                               \
        *msg = (QsClientMsg){ .type = type };                               \
        if (parse_base(ch, type, data, size, msg, &ok_, error)) {           \
            return ok_;                                                     \
        }                                                                   \
    } while (0)

gboolean qs_main_msg_parse(uint16_t type, const uint8_t *data, size_t size,
                           QsClientMsg *msg, GError **error)
{
    BASE_OR_RETURN("main");
    switch (type) {
    case SPICE_MSGC_MAIN_CLIENT_INFO:
        if (!need("main", "CLIENT_INFO", size, 8, error)) {
            return FALSE;
        }
        msg->u.cache_size = qs_wire_get_u64(data);
        return TRUE;
    case SPICE_MSGC_MAIN_ATTACH_CHANNELS:
        return TRUE;
    case SPICE_MSGC_MAIN_MOUSE_MODE_REQUEST:
        if (!need("main", "MOUSE_MODE_REQUEST", size, 2, error)) {
            return FALSE;
        }
        msg->u.mouse_mode = qs_wire_get_u16(data);
        return TRUE;
    case SPICE_MSGC_MAIN_AGENT_START:
    case SPICE_MSGC_MAIN_AGENT_TOKEN:
        if (!need("main", "AGENT_START/AGENT_TOKEN", size, 4, error)) {
            return FALSE;
        }
        msg->u.tokens = qs_wire_get_u32(data);
        return TRUE;
    case SPICE_MSGC_MAIN_AGENT_DATA:
    case SPICE_MSGC_MAIN_MIGRATE_CONNECTED:
    case SPICE_MSGC_MAIN_MIGRATE_CONNECT_ERROR:
    case SPICE_MSGC_MAIN_MIGRATE_END:
    case SPICE_MSGC_MAIN_MIGRATE_DST_DO_SEAMLESS:
    case SPICE_MSGC_MAIN_MIGRATE_CONNECTED_SEAMLESS:
    case SPICE_MSGC_MAIN_QUALITY_INDICATOR:
        set_bytes(msg, data, size);
        return TRUE;
    default:
        return unknown("main", type, error);
    }
}

gboolean qs_display_msg_parse(uint16_t type, const uint8_t *data, size_t size,
                              QsClientMsg *msg, GError **error)
{
    BASE_OR_RETURN("display");
    switch (type) {
    case SPICE_MSGC_DISPLAY_INIT:
        if (!need("display", "INIT", size, 14, error)) {
            return FALSE;
        }
        msg->u.display_init.pixmap_cache_id = data[0];
        msg->u.display_init.pixmap_cache_size = (int64_t)qs_wire_get_u64(data + 1);
        msg->u.display_init.glz_dictionary_id = data[9];
        msg->u.display_init.glz_dictionary_window_size = qs_wire_get_i32(data + 10);
        return TRUE;
    case SPICE_MSGC_DISPLAY_STREAM_REPORT:
        if (!need("display", "STREAM_REPORT", size, 32, error)) {
            return FALSE;
        }
        msg->u.stream_report.stream_id = qs_wire_get_u32(data);
        msg->u.stream_report.unique_id = qs_wire_get_u32(data + 4);
        msg->u.stream_report.start_frame_mm_time = qs_wire_get_u32(data + 8);
        msg->u.stream_report.end_frame_mm_time = qs_wire_get_u32(data + 12);
        msg->u.stream_report.num_frames = qs_wire_get_u32(data + 16);
        msg->u.stream_report.num_drops = qs_wire_get_u32(data + 20);
        msg->u.stream_report.last_frame_delay = qs_wire_get_i32(data + 24);
        msg->u.stream_report.audio_delay = qs_wire_get_u32(data + 28);
        return TRUE;
    case SPICE_MSGC_DISPLAY_PREFERRED_COMPRESSION:
        if (!need("display", "PREFERRED_COMPRESSION", size, 1, error)) {
            return FALSE;
        }
        msg->u.compression = data[0];
        return TRUE;
    case SPICE_MSGC_DISPLAY_GL_DRAW_DONE:
        return TRUE;
    case SPICE_MSGC_DISPLAY_PREFERRED_VIDEO_CODEC_TYPE:
        if (!need("display", "PREFERRED_VIDEO_CODEC_TYPE", size, 1, error) ||
            !need("display", "PREFERRED_VIDEO_CODEC_TYPE", size, 1 + (size_t)data[0],
                  error)) {
            return FALSE;
        }
        set_bytes(msg, data + 1, data[0]);
        return TRUE;
    default:
        return unknown("display", type, error);
    }
}

gboolean qs_inputs_msg_parse(uint16_t type, const uint8_t *data, size_t size,
                             QsClientMsg *msg, GError **error)
{
    BASE_OR_RETURN("inputs");
    switch (type) {
    case SPICE_MSGC_INPUTS_KEY_DOWN:
    case SPICE_MSGC_INPUTS_KEY_UP:
        if (!need("inputs", "KEY_DOWN/KEY_UP", size, 4, error)) {
            return FALSE;
        }
        msg->u.key = qs_wire_get_u32(data);
        return TRUE;
    case SPICE_MSGC_INPUTS_KEY_MODIFIERS:
        if (!need("inputs", "KEY_MODIFIERS", size, 2, error)) {
            return FALSE;
        }
        msg->u.modifiers = qs_wire_get_u16(data);
        return TRUE;
    case SPICE_MSGC_INPUTS_KEY_SCANCODE:
        if (size > SCANCODE_MAX) {
            g_set_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_MALFORMED,
                        "inputs channel: KEY_SCANCODE of %zu bytes, at most %d",
                        size, SCANCODE_MAX);
            return FALSE;
        }
        set_bytes(msg, data, size);
        return TRUE;
    case SPICE_MSGC_INPUTS_MOUSE_MOTION:
        if (!need("inputs", "MOUSE_MOTION", size, 10, error)) {
            return FALSE;
        }
        msg->u.motion.dx = qs_wire_get_i32(data);
        msg->u.motion.dy = qs_wire_get_i32(data + 4);
        msg->u.motion.buttons = qs_wire_get_u16(data + 8);
        return TRUE;
    case SPICE_MSGC_INPUTS_MOUSE_POSITION:
        if (!need("inputs", "MOUSE_POSITION", size, 11, error)) {
            return FALSE;
        }
        msg->u.position.x = qs_wire_get_u32(data);
        msg->u.position.y = qs_wire_get_u32(data + 4);
        msg->u.position.buttons = qs_wire_get_u16(data + 8);
        msg->u.position.display_id = data[10];
        return TRUE;
    case SPICE_MSGC_INPUTS_MOUSE_PRESS:
    case SPICE_MSGC_INPUTS_MOUSE_RELEASE:
        if (!need("inputs", "MOUSE_PRESS/MOUSE_RELEASE", size, 3, error)) {
            return FALSE;
        }
        msg->u.button.button = data[0];
        msg->u.button.buttons = qs_wire_get_u16(data + 1);
        return TRUE;
    default:
        return unknown("inputs", type, error);
    }
}

gboolean qs_cursor_msg_parse(uint16_t type, const uint8_t *data, size_t size,
                             QsClientMsg *msg, GError **error)
{
    BASE_OR_RETURN("cursor");
    return unknown("cursor", type, error);
}

/* The playback channel has no messages of its own to receive (volume and
 * latency go the other way). */
gboolean qs_playback_msg_parse(uint16_t type, const uint8_t *data, size_t size,
                               QsClientMsg *msg, GError **error)
{
    BASE_OR_RETURN("playback");
    return unknown("playback", type, error);
}

gboolean qs_record_msg_parse(uint16_t type, const uint8_t *data, size_t size,
                             QsClientMsg *msg, GError **error)
{
    BASE_OR_RETURN("record");
    switch (type) {
    case SPICE_MSGC_RECORD_DATA:
        if (!need("record", "DATA", size, 4, error)) {
            return FALSE;
        }
        msg->u.record.time = qs_wire_get_u32(data);
        msg->u.record.data = data + 4;
        msg->u.record.len = (uint32_t)(size - 4);
        return TRUE;
    case SPICE_MSGC_RECORD_MODE:
        if (!need("record", "MODE", size, 6, error)) {
            return FALSE;
        }
        msg->u.record.time = qs_wire_get_u32(data);
        msg->u.record.mode = qs_wire_get_u16(data + 4);
        msg->u.record.data = data + 6;
        msg->u.record.len = (uint32_t)(size - 6);
        return TRUE;
    case SPICE_MSGC_RECORD_START_MARK:
        if (!need("record", "START_MARK", size, 4, error)) {
            return FALSE;
        }
        msg->u.record.time = qs_wire_get_u32(data);
        return TRUE;
    default:
        return unknown("record", type, error);
    }
}

gboolean qs_vmc_msg_parse(gboolean port, uint16_t type, const uint8_t *data, size_t size,
                          QsClientMsg *msg, GError **error)
{
    const char *ch = port ? "port" : "spicevmc";

    BASE_OR_RETURN(ch);
    switch (type) {
    case SPICE_MSGC_SPICEVMC_DATA:
        set_bytes(msg, data, size);
        return TRUE;
    case SPICE_MSGC_SPICEVMC_COMPRESSED_DATA:
        g_set_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_PROTOCOL,
                    "%s channel: COMPRESSED_DATA, but LZ4 compression was not offered", ch);
        return FALSE;
    case SPICE_MSGC_PORT_EVENT:
        if (!port) {
            return unknown(ch, type, error);
        }
        if (!need(ch, "PORT_EVENT", size, 1, error)) {
            return FALSE;
        }
        msg->u.port_event = data[0];
        return TRUE;
    default:
        return unknown(ch, type, error);
    }
}
