/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Builders of server->client SPICE messages: state in, message body out (no header, no I/O). */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "encode/qs-encoder.h"

/*
 * Every builder returns the body of one message (what follows the mini
 * header), little-endian and packed as spice-protocol.md §2-§5 lays it out.
 * Bodyless messages (MARK, RESET, INVAL_ALL_PALETTES, MOTION_ACK, HIDE...)
 * are sent with a NULL payload and need no builder.
 */

/* Base (every channel). */
GBytes *qs_msg_set_ack(uint32_t generation, uint32_t window);
GBytes *qs_msg_ping(uint32_t id, uint64_t timestamp_us);

/* Main channel. */
typedef struct {
    uint32_t session_id;
    uint32_t display_channels_hint;
    uint32_t supported_mouse_modes;     /* SPICE_MOUSE_MODE_* bits */
    uint32_t current_mouse_mode;
    uint32_t agent_connected;
    uint32_t agent_tokens;
    uint32_t multi_media_time;
    uint32_t ram_hint;
} QsMainInit;

typedef struct {
    uint8_t type;                       /* SPICE_CHANNEL_* */
    uint8_t id;
} QsChannelId;

#define QS_MAIN_NAME_MAX 1024           /* longer VM names are cut */

GBytes *qs_msg_main_init(const QsMainInit *init);
GBytes *qs_msg_main_channels_list(const QsChannelId *channels, guint n);
GBytes *qs_msg_main_mouse_mode(uint16_t supported, uint16_t current);
GBytes *qs_msg_main_multi_media_time(uint32_t mm_time);
GBytes *qs_msg_main_name(const char *name);
GBytes *qs_msg_main_uuid(const uint8_t uuid[16]);
/* Parses "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (qemu's VM.UUID). */
gboolean qs_uuid_parse(const char *text, uint8_t uuid[16]);

/* Display channel. */
typedef struct {
    uint32_t monitor_id;
    uint32_t surface_id;
    uint32_t width, height;
    uint32_t x, y;
    uint32_t flags;
} QsMonitor;

GBytes *qs_msg_surface_create(uint32_t surface_id, uint32_t width,
                              uint32_t height, uint32_t format, uint32_t flags);
GBytes *qs_msg_surface_destroy(uint32_t surface_id);
GBytes *qs_msg_monitors_config(const QsMonitor *monitors, uint16_t n,
                               uint16_t max_allowed);
/* DRAW_COPY of `rect` to (x, y) on `surface_id`, clip NONE, rop PUT, image
 * encoded with `codec` (falls back to BITMAP, *used says which). */
#define QS_DRAW_COPY_HEADER_SIZE 57u
GBytes *qs_msg_draw_copy(uint32_t surface_id, int32_t x, int32_t y,
                         const QsPixelRect *rect, QsImageCodec codec,
                         uint64_t image_id, QsImageCodec *used);
/* The same with a JPEG image of `quality` (1..100), or `fallback` when JPEG
 * does not pay. */
GBytes *qs_msg_draw_copy_jpeg(uint32_t surface_id, int32_t x, int32_t y,
                              const QsPixelRect *rect, int quality,
                              QsImageCodec fallback, uint64_t image_id,
                              QsImageCodec *used);

/* Inputs channel. */
GBytes *qs_msg_inputs_init(uint16_t modifiers);
GBytes *qs_msg_inputs_key_modifiers(uint16_t modifiers);

/* Cursor channel. */
#define QS_SPICE_CURSOR_MAX_SIDE 512u

typedef struct {
    uint64_t unique;                    /* fresh per shape */
    uint16_t width, height;
    uint16_t hot_x, hot_y;
    GBytes *argb;                       /* width * height * 4 bytes, ARGB32 LE */
} QsSpiceCursor;

/* shape NULL: a Cursor with flags NONE (the client hides the pointer). */
GBytes *qs_msg_cursor_init(int16_t x, int16_t y, uint16_t trail_len,
                           uint16_t trail_freq, gboolean visible,
                           const QsSpiceCursor *shape);
GBytes *qs_msg_cursor_set(int16_t x, int16_t y, gboolean visible,
                          const QsSpiceCursor *shape);
GBytes *qs_msg_cursor_move(int16_t x, int16_t y);
GBytes *qs_msg_cursor_trail(uint16_t length, uint16_t frequency);
/* Is `shape` consistent (sizes bounded, data length = w * h * 4)? */
gboolean qs_spice_cursor_valid(const QsSpiceCursor *shape);

/*
 * Video streams (spice-protocol.md §3.5, §3.6; builders in qs-stream-msg.c).
 * Rectangles are given as x, y, width, height and written as SpiceRect
 * {top, left, bottom, right}.
 */
typedef struct {
    int32_t x, y;
    uint32_t width, height;
} QsStreamRect;

/* Largest clip list we build; callers merge beyond it. */
#define QS_STREAM_CLIP_MAX_RECTS 1024u

typedef struct {
    gboolean rects;             /* FALSE: Clip NONE; TRUE: RECTS (n may be 0,
                                 * which hides the stream entirely) */
    const QsStreamRect *r;
    uint32_t n;                 /* <= QS_STREAM_CLIP_MAX_RECTS */
} QsStreamClip;

typedef struct {
    uint32_t surface_id;
    uint32_t id;                /* < SPICE_MAX_NUM_STREAMS (64) */
    uint8_t codec_type;         /* SPICE_VIDEO_CODEC_TYPE_* (= QsVideoCodec) */
    gboolean top_down;          /* SPICE_STREAM_FLAGS_TOP_DOWN: our frames are */
    uint64_t stamp;
    uint32_t stream_width, stream_height;   /* encoded frame size */
    uint32_t src_width, src_height;         /* source area size */
    QsStreamRect dest;
    QsStreamClip clip;
} QsStreamCreate;

GBytes *qs_msg_stream_create(const QsStreamCreate *create);
/* STREAM_DATA: u32 id; u32 mm_time; u32 size; the frame. */
GBytes *qs_msg_stream_data(uint32_t id, uint32_t mm_time, GBytes *frame);
/* STREAM_DATA_SIZED (client cap SIZED_STREAM): a frame whose size or
 * destination differs from the stream's. */
GBytes *qs_msg_stream_data_sized(uint32_t id, uint32_t mm_time, uint32_t width,
                                 uint32_t height, const QsStreamRect *dest,
                                 GBytes *frame);
GBytes *qs_msg_stream_clip(uint32_t id, const QsStreamClip *clip);
GBytes *qs_msg_stream_destroy(uint32_t id);
/* STREAM_DESTROY_ALL has no body. */
GBytes *qs_msg_stream_activate_report(uint32_t stream_id, uint32_t unique_id,
                                      uint32_t max_window_size,
                                      uint32_t timeout_ms);

/* Multimedia time; what spice-gtk does with it is at the top of
 * qs-stream-msg.c's part on it. */
/* The value for MAIN_INIT.multi_media_time and MULTI_MEDIA_TIME. */
uint32_t qs_mm_time_for_client(uint32_t server_mm_now);
/* The server's multimedia clock and frame stamps: flow/qs-frame-time.h. */
