/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Video encoders for SPICE streams: 32-bit xRGB frames in, one codec frame per SPICE STREAM_DATA out. */
#pragma once

#include <glib.h>
#include <stdint.h>

/*
 * One encoder per SPICE stream. Frames are x8r8g8b8 in memory order B, G,
 * R, X (the surface format), all of the size given at creation. Output is
 * what spice-gtk expects as the payload of one STREAM_DATA message
 * (spice-protocol.md §3.5):
 *
 *   H264   one Annex-B access unit (AUD first); a keyframe is an IDR with
 *          SPS and PPS in front, so a decoder can start there (openh264
 *          needs them: ryll#398). Constrained baseline, no B-frames, one
 *          slice, BT.601 full range signalled in the VUI.
 *   MJPEG  one baseline JFIF; every frame is a keyframe.
 *
 * Encoding is synchronous and single-threaded: the caller decides which
 * frames to encode (the scheduler drops frames, the encoder never queues
 * them), so every encode() returns the frame it was given.
 */

typedef enum {
    QS_VIDEO_CODEC_MJPEG = 1,   /* = SPICE_VIDEO_CODEC_TYPE_MJPEG */
    QS_VIDEO_CODEC_H264 = 3,    /* = SPICE_VIDEO_CODEC_TYPE_H264 */
} QsVideoCodec;

#define QS_VIDEO_ERROR (qs_video_error_quark())
GQuark qs_video_error_quark(void);

typedef enum {
    QS_VIDEO_ERROR_INVALID,     /* size, fps or bitrate out of range */
    QS_VIDEO_ERROR_UNSUPPORTED, /* codec not built in */
    QS_VIDEO_ERROR_FAILED,      /* the codec library refused */
} QsVideoError;

/* Bounds on what create() and set_bitrate() accept. */
#define QS_VIDEO_MIN_SIDE 16u
#define QS_VIDEO_MAX_SIDE 4096u
#define QS_VIDEO_MAX_FPS 60u
#define QS_VIDEO_MIN_BITRATE 64000u         /* bit/s */
#define QS_VIDEO_MAX_BITRATE 200000000u
#define QS_VIDEO_MAX_QUALITY 100

/*
 * Rate control. `quality` 0: the bit rate is the target (H.264 ABR, MJPEG's
 * quality ladder steered to bitrate / fps), as a link-following stream.
 * `quality` > 0: a picture-quality target, the bit rate only its ceiling:
 *   H264   x264's constant rate factor (1..51, lower is better), with the
 *          VBV's max rate at the bit rate, so a still or smooth picture costs
 *          little and noise is capped by the link;
 *   MJPEG  the highest JPEG quality (1..100) the ladder may reach; it steps
 *          down only when a frame overruns the ceiling's share of its time.
 */

typedef struct QsVideoEncoder QsVideoEncoder;

typedef struct {
    GBytes *data;               /* owned by the caller */
    gboolean keyframe;          /* decodable without earlier frames */
    gboolean starved;           /* the ceiling held it far below the quality target */
} QsVideoFrame;

/*
 * A frame is starved when, with a quality target, the ceiling held it to
 * at most half the bits the target asks for: x264's effective CRF of the
 * frame at least QS_VIDEO_STARVED_CRF_STEPS above the target (six steps
 * are a factor of two in bits), or an MJPEG frame at half the target's
 * JPEG quality or less. Measured for 640x480 noise at CRF 25 (these
 * settings, 60 frames of random Y, U and V): effective CRF 42 at a 12
 * Mbit/s ceiling at 30 fps, 38 at 20 Mbit/s, 48 at 3 and 52 at 1.2. The
 * benchmark's heavy guest (random RGB, so smoother chroma) came out
 * mostly between 31 and 33 at 85 KB a frame: with 10 or 8 steps its
 * frames were starved and fed by turns, with 6 nearly all starved
 * (docs/performance.md, "Frame rate by fit"). The busy
 * guest's picture fits the target at 0.7 Mbit/s. What the caller does
 * with it is its own (flow/qs-rate.h).
 */
#define QS_VIDEO_STARVED_CRF_STEPS 6

/* width and height must be even (I420 chroma) and within the bounds above;
 * fps 1..QS_VIDEO_MAX_FPS is the nominal rate (the frame budget until
 * frames come with their own times); `quality` as above, 0..51 for H.264. */
QsVideoEncoder *qs_video_encoder_new(QsVideoCodec codec, uint32_t width,
                                     uint32_t height, uint32_t fps,
                                     uint32_t bitrate_bps, int quality,
                                     GError **error);
void qs_video_encoder_free(QsVideoEncoder *enc);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsVideoEncoder, qs_video_encoder_free)

/* Encoders created and not yet freed, in the whole process. A stream's
 * encoder passes between the display channel and its worker job, and x264
 * state is megabytes: the tests check none is lost when a client goes in
 * the middle of an encode. */
guint qs_video_encoders_alive(void);

/* Encodes one frame (`pixels` is the top-left pixel, `stride` >= width * 4).
 * The first frame and any with `force_keyframe` are keyframes. FALSE with
 * `error` set only when the codec library fails; `frame` is then untouched. */
gboolean qs_video_encoder_encode(QsVideoEncoder *enc, const uint8_t *pixels,
                                 size_t stride, gboolean force_keyframe,
                                 QsVideoFrame *frame, GError **error);
/* The interval at which the source delivers new pictures (qemu's frame
 * interval over the stream's area, in microseconds): with a quality target
 * the ceiling is spread over it, so a 10 fps source may have frames three
 * times a 30 fps one's, within 1..4 nominal intervals. 0 (the default):
 * the nominal 1/fps. It is the source's interval and not the time between
 * encodes on purpose: an encoder that falls behind must not make its own
 * frames bigger, and so slower still. */
void qs_video_encoder_set_source_interval(QsVideoEncoder *enc, int64_t interval_us);

/*
 * spice-gtk 0.42 feeds H.264 to playbin with caps "video/x-h264" and no
 * alignment, so h264parse cannot know an access unit has ended until the
 * next one's start code arrives: the client shows frame N only when frame
 * N+1 arrives (measured: test-video /encode/video/h264-live; with
 * alignment=au in the caps there is no hold). When the picture stops
 * changing, the last frame would stay invisible. needs_flush() says whether
 * the codec has this hold; flush() then encodes the previous picture again
 * (a P-frame of skipped macroblocks, a few dozen bytes), which pushes the
 * real last frame out and is itself invisible. The scheduler sends it one
 * frame interval after the last real frame.
 */
gboolean qs_video_encoder_needs_flush(const QsVideoEncoder *enc);
/* FALSE with `error` set before the first frame or on codec failure. */
gboolean qs_video_encoder_flush(QsVideoEncoder *enc, QsVideoFrame *frame,
                                GError **error);

/* Changes the target for the following frames, keeping the stream (no
 * keyframe, no new STREAM_CREATE). The value is clamped to the bounds. */
void qs_video_encoder_set_bitrate(QsVideoEncoder *enc, uint32_t bitrate_bps);
uint32_t qs_video_encoder_get_bitrate(const QsVideoEncoder *enc);
int qs_video_encoder_get_quality(const QsVideoEncoder *enc);

QsVideoCodec qs_video_encoder_get_codec(const QsVideoEncoder *enc);
const char *qs_video_codec_name(QsVideoCodec codec);

/*
 * BT.601 full-range B,G,R,X -> I420 (the colour space the H.264 VUI
 * announces). Each chroma sample is the average of its 2x2 block. width and
 * height even. Exposed for the tests and the benchmark.
 */
void qs_video_bgrx_to_i420(const uint8_t *pixels, size_t stride, uint32_t width,
                           uint32_t height, uint8_t *y, size_t y_stride,
                           uint8_t *u, uint8_t *v, size_t uv_stride);
