/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Builders of the display channel's video stream messages; what the client does with their multimedia time. */
#include "wire/qs-msg.h"
#include "wire/qs-wire.h"

#include <spice/enums.h>

/* SpiceRect is {top, left, bottom, right}, not {x, y, w, h}. */
static void put_rect(GByteArray *b, const QsStreamRect *r)
{
    qs_wire_i32(b, r->y);
    qs_wire_i32(b, r->x);
    qs_wire_i32(b, (int32_t)(r->y + (int64_t)r->height));
    qs_wire_i32(b, (int32_t)(r->x + (int64_t)r->width));
}

/* Clip is inline: u8 type; RECTS: u32 n; Rect[n] (spice-protocol.md §3.1). */
static void put_clip(GByteArray *b, const QsStreamClip *clip)
{
    if (!clip || !clip->rects) {
        qs_wire_u8(b, SPICE_CLIP_TYPE_NONE);
        return;
    }
    g_assert(clip->n <= QS_STREAM_CLIP_MAX_RECTS);
    qs_wire_u8(b, SPICE_CLIP_TYPE_RECTS);
    qs_wire_u32(b, clip->n);
    for (uint32_t i = 0; i < clip->n; i++) {
        put_rect(b, &clip->r[i]);
    }
}

static guint clip_size(const QsStreamClip *clip)
{
    return clip && clip->rects ? 5 + 16 * MIN(clip->n, QS_STREAM_CLIP_MAX_RECTS) : 1;
}

GBytes *qs_msg_stream_create(const QsStreamCreate *c)
{
    GByteArray *b = g_byte_array_sized_new(50 + clip_size(&c->clip));

    qs_wire_u32(b, c->surface_id);
    qs_wire_u32(b, c->id);
    qs_wire_u8(b, c->top_down ? SPICE_STREAM_FLAGS_TOP_DOWN : 0);
    qs_wire_u8(b, c->codec_type);
    qs_wire_u64(b, c->stamp);
    qs_wire_u32(b, c->stream_width);
    qs_wire_u32(b, c->stream_height);
    qs_wire_u32(b, c->src_width);
    qs_wire_u32(b, c->src_height);
    put_rect(b, &c->dest);
    put_clip(b, &c->clip);
    return g_byte_array_free_to_bytes(b);
}

/* The frame is copied behind the header: the message is one buffer for the
 * sender, and a 640x480 H.264 frame is a few KB, an MJPEG one tens. */
static GBytes *finish_with_frame(GByteArray *b, GBytes *frame)
{
    gsize size = 0;
    const uint8_t *data = g_bytes_get_data(frame, &size);

    g_assert(size <= G_MAXUINT32 - b->len);
    qs_wire_u32(b, (uint32_t)size);
    if (size) {
        g_byte_array_append(b, data, (guint)size);
    }
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_msg_stream_data(uint32_t id, uint32_t mm_time, GBytes *frame)
{
    GByteArray *b = g_byte_array_sized_new(12 + (guint)g_bytes_get_size(frame));

    qs_wire_u32(b, id);
    qs_wire_u32(b, mm_time);
    return finish_with_frame(b, frame);
}

GBytes *qs_msg_stream_data_sized(uint32_t id, uint32_t mm_time, uint32_t width,
                                 uint32_t height, const QsStreamRect *dest,
                                 GBytes *frame)
{
    GByteArray *b = g_byte_array_sized_new(36 + (guint)g_bytes_get_size(frame));

    qs_wire_u32(b, id);
    qs_wire_u32(b, mm_time);
    qs_wire_u32(b, width);
    qs_wire_u32(b, height);
    put_rect(b, dest);
    return finish_with_frame(b, frame);
}

GBytes *qs_msg_stream_clip(uint32_t id, const QsStreamClip *clip)
{
    GByteArray *b = g_byte_array_sized_new(4 + clip_size(clip));

    qs_wire_u32(b, id);
    put_clip(b, clip);
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_msg_stream_destroy(uint32_t id)
{
    GByteArray *b = g_byte_array_sized_new(4);

    qs_wire_u32(b, id);
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_msg_stream_activate_report(uint32_t stream_id, uint32_t unique_id,
                                      uint32_t max_window_size,
                                      uint32_t timeout_ms)
{
    GByteArray *b = g_byte_array_sized_new(16);

    qs_wire_u32(b, stream_id);
    qs_wire_u32(b, unique_id);
    qs_wire_u32(b, max_window_size);
    qs_wire_u32(b, timeout_ms);
    return g_byte_array_free_to_bytes(b);
}

/*
 * Multimedia time.
 *
 * What spice-gtk 0.42 does with it (channel-display.c, channel-display-gst.c,
 * channel-display-mjpeg.c, spice-session.c): its clock C is the last
 * MAIN_INIT or MULTI_MEDIA_TIME value plus the time elapsed since that
 * message arrived (a playback channel moves it too; we have none).
 * STREAM_ACTIVATE_REPORT and the frames' own mm_time never move it (a frame
 * stamped 0 is taken as C + 100). For each STREAM_DATA, margin = mm_time - C
 * when the display coroutine handles it:
 *  - margin < 0: "stream data too late": a drop in the STREAM_REPORT;
 *    MJPEG frames are discarded at once, H.264 ones still decoded;
 *  - after decoding (H.264: when the next access unit arrived, qs-video.h),
 *    a frame whose mm_time has passed is shown at once if it is the only
 *    decoded one, and discarded ("rendering too late") if a newer decoded
 *    frame waits; the built-in MJPEG decoder discards any frame it
 *    schedules after its mm_time;
 *  - otherwise the frame is held until C reaches its mm_time.
 * spice-server tells the client C = now - 400 ms and stamps frames with its
 * own now, hence the ~400 ms hold (test-environment.md §6).
 *
 * Our rule: MAIN_INIT carries server now (qs_mm_time_for_client), so
 * C(t) = S(t) - d_main, and no MULTI_MEDIA_TIME is needed: client and
 * server clocks are both monotonic, and what drift remains is learnt with
 * the rest. The display plan (flow/qs-plan-streams.c) stamps each frame with
 * S + a lead from flow/qs-frame-time.h, which asks the client for a report
 * per frame and fits the lead to the margins it reports (the rule it
 * replaced, a correction steering one sampled margin per 20 frames towards
 * 5 ms, left 2-4 % of the frames late behind a 2 Mbit tbf).
 *
 * Stamps advance by at least half the time since the previous frame: a
 * frame due at (or just after) its predecessor's time is decoded after it
 * and dropped as late when a newer one is waiting, so when the lead falls
 * the client's hold drains at half speed instead. They never go backwards
 * (spice-gtk resets an MJPEG queue on a smaller one) and are never 0
 * (spice-gtk then warns and adds 100 ms); arithmetic modulo 2^32 like the
 * client's.
 */

uint32_t qs_mm_time_for_client(uint32_t server_mm_now)
{
    return server_mm_now;
}

