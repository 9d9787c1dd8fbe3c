/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Builders of the display channel's video stream messages, and the multimedia-time stamping of their frames. */
#include "channels/qs-msg.h"
#include "encode/qs-wire.h"

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
 * channel-display-mjpeg.c): its clock C is the last MAIN_INIT or
 * MULTI_MEDIA_TIME value plus the time elapsed since that message arrived.
 * For each STREAM_DATA it computes margin = frame mm_time - C on arrival.
 * margin < 0: the frame is "late": counted as a drop in the next
 * STREAM_REPORT, and MJPEG frames are thrown away at once (H.264 is still
 * decoded, and shown only if no newer frame is waiting). margin >= 0: the
 * frame is decoded and shown when C reaches its mm_time, i.e. held for
 * `margin` ms. spice-server tells the client C = now - 400 ms and stamps
 * frames with its own now, hence the ~400 ms hold (test-environment.md §6).
 *
 * Our rule:
 *  1. The client clock is our clock: MAIN_INIT and MULTI_MEDIA_TIME carry
 *     server now (qs_mm_time_for_client), so C(t) = S(t) - d_main, d_main
 *     being the main channel's one-way delay.
 *  2. A frame is stamped when it is handed to the display socket, with
 *     S(now) + delivery + correction + QS_STREAM_TARGET_MARGIN_MS, where
 *     delivery is the caller's estimate of how long the bytes ahead of it and
 *     its own take to drain. It arrives complete at S + d_display + actual
 *     delivery, so the client sees
 *        margin = (delivery estimate - actual) + (d_main - d_display)
 *                 + correction + target,
 *     which is `target` ms (shown almost at once, not late) when the
 *     estimate is right and both channels share the path.
 *  3. The stream report tells us the margin the client really saw: a late
 *     frame raises the correction at once by what it missed, a margin well
 *     above the target lowers it by half the excess per report, so the hold
 *     converges to the target and drops stop after one report window.
 *  4. Stamps never go backwards within a stream (spice-gtk resets an MJPEG
 *     queue on a smaller stamp) and are never 0 (spice-gtk then warns and
 *     adds 100 ms). Arithmetic is modulo 2^32 like the client's.
 *
 * The margin only covers the clock. spice-gtk's h264parse also holds each
 * H.264 access unit until the next arrives (qs-video.h): a frame stamped
 * by this rule is decoded when its successor lands and then shown at once
 * as "the least out of date" if its time has passed; the caller sends
 * qs_video_encoder_flush()'s frame when no successor follows.
 */

uint32_t qs_mm_time_from_monotonic(int64_t monotonic_us)
{
    return (uint32_t)(uint64_t)(monotonic_us / 1000);
}

uint32_t qs_mm_time_for_client(uint32_t server_mm_now)
{
    return server_mm_now;
}

uint32_t qs_stream_stamp_frame(QsStreamStamp *st, uint32_t server_mm_now,
                               uint32_t delivery_ms)
{
    int64_t ahead = (int64_t)MIN(delivery_ms, (uint32_t)G_MAXINT32) +
                    st->correction + QS_STREAM_TARGET_MARGIN_MS;
    uint32_t stamp = server_mm_now + (uint32_t)CLAMP(ahead, 0, (int64_t)G_MAXINT32);

    if (st->last != 0 && (int32_t)(stamp - st->last) < 0) {
        stamp = st->last;
    }
    if (stamp == 0) {
        stamp = 1;
    }
    st->last = stamp;
    return stamp;
}

void qs_stream_stamp_report(QsStreamStamp *st, int32_t last_frame_delay,
                            uint32_t num_frames, uint32_t num_drops)
{
    int64_t c = st->correction;

    /* num_frames 0 with num_drops 0xffffffff means "cannot decode": the
     * caller stops the stream, the clock has nothing to learn. */
    if (num_frames == 0) {
        return;
    }
    if (last_frame_delay < 0) {
        c += (int64_t)QS_STREAM_TARGET_MARGIN_MS - last_frame_delay;
    } else if (num_drops > 0) {
        /* Earlier frames were late but the last one made it: a little more. */
        c += QS_STREAM_TARGET_MARGIN_MS;
    } else if (last_frame_delay > 2 * QS_STREAM_TARGET_MARGIN_MS) {
        c -= (last_frame_delay - QS_STREAM_TARGET_MARGIN_MS) / 2;
    }
    st->correction = (int32_t)CLAMP(c, -(int64_t)QS_STREAM_MAX_CORRECTION_MS,
                                    (int64_t)QS_STREAM_MAX_CORRECTION_MS);
}
