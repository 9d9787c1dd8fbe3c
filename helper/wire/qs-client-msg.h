/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Parsers of client->server SPICE messages, one entry point per channel type. */
#pragma once

#include <glib.h>
#include <stdint.h>

#define QS_CHANNEL_ERROR (qs_channel_error_quark())
GQuark qs_channel_error_quark(void);

typedef enum {
    QS_CHANNEL_ERROR_UNKNOWN_TYPE,  /* a message type this channel does not have */
    QS_CHANNEL_ERROR_MALFORMED,     /* too short or an impossible field */
    QS_CHANNEL_ERROR_PROTOCOL,      /* a valid message at the wrong time */
} QsChannelError;

/*
 * A parsed message. Fixed-size bodies are checked against their minimum size
 * and trailing bytes are ignored, as spice-server's generated demarshallers
 * do; variable parts point into the caller's buffer (valid as long as it).
 */
typedef struct {
    uint16_t type;                  /* SPICE_MSGC_* */
    union {
        uint32_t generation;        /* ACK_SYNC */
        struct { uint32_t id; uint64_t timestamp; } pong;
        struct { uint64_t timestamp; uint32_t reason; } disconnecting;
        uint64_t cache_size;        /* MAIN_CLIENT_INFO */
        uint16_t mouse_mode;        /* MAIN_MOUSE_MODE_REQUEST */
        uint32_t tokens;            /* MAIN_AGENT_START, MAIN_AGENT_TOKEN */
        struct {                    /* DISPLAY_INIT */
            uint8_t pixmap_cache_id;
            int64_t pixmap_cache_size;
            uint8_t glz_dictionary_id;
            int32_t glz_dictionary_window_size;
        } display_init;
        struct {                    /* DISPLAY_STREAM_REPORT */
            uint32_t stream_id, unique_id;
            uint32_t start_frame_mm_time, end_frame_mm_time;
            uint32_t num_frames, num_drops;
            int32_t last_frame_delay;
            uint32_t audio_delay;
        } stream_report;
        uint8_t compression;        /* DISPLAY_PREFERRED_COMPRESSION */
        uint8_t port_event;         /* PORT_EVENT (SPICE_PORT_EVENT_*) */
        uint32_t key;               /* INPUTS_KEY_DOWN / KEY_UP */
        uint16_t modifiers;         /* INPUTS_KEY_MODIFIERS */
        struct { int32_t dx, dy; uint16_t buttons; } motion;
        struct { uint32_t x, y; uint16_t buttons; uint8_t display_id; } position;
        struct { uint8_t button; uint16_t buttons; } button;  /* PRESS, RELEASE */
        struct {                    /* RECORD_DATA, RECORD_MODE, RECORD_START_MARK */
            uint32_t time;
            uint16_t mode;          /* RECORD_MODE */
            const uint8_t *data;    /* DATA's sound, MODE's codec data */
            uint32_t len;
        } record;
        /* Opaque or list bodies: KEY_SCANCODE bytes, MAIN_AGENT_DATA,
         * PREFERRED_VIDEO_CODEC_TYPE codecs, MIGRATE_DATA, SPICEVMC_DATA, and
         * ignored ones. */
        struct { const uint8_t *data; uint32_t len; } bytes;
    } u;
} QsClientMsg;

/* Each accepts the base messages (ACK_SYNC, ACK, PONG, MIGRATE_FLUSH_MARK,
 * MIGRATE_DATA, DISCONNECTING) and the channel's own; anything else, or a
 * message too short for its type, fails with a QS_CHANNEL_ERROR naming it. */
gboolean qs_main_msg_parse(uint16_t type, const uint8_t *data, size_t size,
                           QsClientMsg *msg, GError **error);
gboolean qs_display_msg_parse(uint16_t type, const uint8_t *data, size_t size,
                              QsClientMsg *msg, GError **error);
gboolean qs_inputs_msg_parse(uint16_t type, const uint8_t *data, size_t size,
                             QsClientMsg *msg, GError **error);
gboolean qs_cursor_msg_parse(uint16_t type, const uint8_t *data, size_t size,
                             QsClientMsg *msg, GError **error);
gboolean qs_playback_msg_parse(uint16_t type, const uint8_t *data, size_t size,
                               QsClientMsg *msg, GError **error);
gboolean qs_record_msg_parse(uint16_t type, const uint8_t *data, size_t size,
                             QsClientMsg *msg, GError **error);
/* A spicevmc channel's (port, webdav, usbredir, smartcard): SPICEVMC_DATA
 * (any size, empty included) and, for port and webdav (`port`), PORT_EVENT.
 * COMPRESSED_DATA is refused: we never offer DATA_COMPRESS_LZ4. */
gboolean qs_vmc_msg_parse(gboolean port, uint16_t type, const uint8_t *data, size_t size,
                          QsClientMsg *msg, GError **error);
