/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Video encodes shared by the viewers of one console: one encoder per tier, its frames taken in order by every viewer's stream in it. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "encode/qs-encode-queue.h"
#include "encode/qs-video.h"
#include "util/qs-share-rules.h"

/*
 * Viewers whose plans stream the same rectangle with the same codec and
 * frame rate, at bit rates of the same class (a factor of two), share one
 * encoder: a tier. Each viewer's stream holds a seat in it. H.264 frames
 * refer to the ones before, so every seat takes the tier's frames in order:
 * a seat at the head has its request encoded (from the pixels it read); a
 * seat behind is given the next frame already made, without an encode.
 *
 * A seat starts at the head and its first frame is a keyframe (the tier
 * forces one), so joining costs the others one keyframe. A seat a few
 * frames behind jumps to the head and starts again at a keyframe (old
 * frames would only show the past); one that falls behind again soon after
 * goes on alone in a tier of its own, never to share again in that stream:
 * a viewer that slow would otherwise cost every other viewer keyframes. A seat whose bit rate
 * leaves its class moves to that class's tier (a keyframe).
 *
 * A seat whose plan lowers its frame rate (flow/qs-rate.h: it reads one
 * frame in `read_div` intervals) moves too, to the tier of seats at that
 * rate: in a tier at the full rate it could keep up only by taking every
 * frame, which undoes the lowering its link needed, or fall behind and
 * go solo after a catch-up keyframe for everyone; and the flush its plan
 * asks for after each frame would be a frame of every seat's stream,
 * which the encoder's rate control counts against all of them
 * (encode/qs-video-x264.c). Viewers lowered alike share again.
 *
 * Each viewer's plan still decides when its stream takes a frame and what
 * it may cost: a seat behind takes frames as its plan asks, at its own pace.
 * How far behind, how soon, which class and what rate are the rules'
 * (flow/qs-share-policy.h, handed in as a QsShareRules); the tiers, their
 * ring of frames and their encodes are here. Everything here runs on the
 * channels' thread; encodes run on the queue's workers
 * (encode/qs-encode-queue.h), and a seat's answer always comes later from
 * the main context, never inside the request.
 */

/* Frames a tier keeps for seats behind the head. */
#define QS_VIDEO_SHARE_RING 8

typedef struct QsVideoShare QsVideoShare;
typedef struct QsVideoSeat QsVideoSeat;

typedef struct {
    GBytes *data;               /* the codec frame; NULL when !ok or nothing was due */
    gboolean flush;             /* an invisible repeat of the frame before it */
    gboolean ok;                /* FALSE: the codec failed (`error`) */
    gboolean needs_flush;       /* the codec holds a frame until the next one */
    gboolean shared;            /* made for another seat: no encode for this one */
    const char *error;
    gboolean starved;           /* the ceiling held it far below its quality target */
} QsSharedFrame;

/* A seat's answer; `frame` and its data are the callee's only during the call. */
typedef void (*QsVideoSeatFunc)(QsVideoSeat *seat, const QsSharedFrame *frame,
                                 gpointer data);

/* One per console; its tiers live on while seats hold them. Encodes run
 * on `queue`'s workers; which seats share and at what rate is `rules`'
 * (flow's qs_share_rules; kept, not copied). `enabled` FALSE (the caller
 * reads QS_STREAM_SHARE=0) shares nothing: every stream then has an
 * encoder of its own, as for the benchmark's comparison. */
QsVideoShare *qs_video_share_new(QsEncodeQueue *queue, const QsShareRules *rules,
                                 gboolean enabled);
void qs_video_share_free(QsVideoShare *share);
/* Tiers open now. */
guint qs_video_share_n_tiers(const QsVideoShare *share);

typedef struct {
    QsVideoCodec codec;
    int32_t x, y;
    uint32_t width, height;     /* even, within the encoder's bounds */
    uint32_t fps;
    uint32_t bitrate;           /* bit/s: the target, or with `quality` the ceiling */
    int quality;                /* qs_video_encoder_new()'s; 0: none */
} QsVideoShape;

QsVideoSeat *qs_video_seat_new(QsVideoShare *share, const QsVideoShape *shape,
                                 QsVideoSeatFunc func, gpointer data);
/* Ends the seat; an answer not given yet never comes. */
void qs_video_seat_free(QsVideoSeat *seat);

/* Before each request: follows the plan's `bitrate` and frame rate (a frame
 * read every `read_div` nominal intervals), either of which may move the
 * seat to another tier, and says whether the seat is at the head, i.e.
 * whether a frame request must carry the pixels read now. */
gboolean qs_video_seat_needs_pixels(QsVideoSeat *seat, uint32_t bitrate, guint read_div);

/* The seat's next frame: a frame (`pixels`, owned, rows of width * 4
 * bytes, when needs_pixels() said so, else NULL) or a flush. One request
 * at a time; the answer comes through the seat's func. `source_interval_us`
 * is qemu's frame interval over the area as the seat's plan knows it (0:
 * not known), for an encode the request starts. */
void qs_video_seat_request(QsVideoSeat *seat, gboolean flush, uint8_t *pixels,
                            int64_t source_interval_us);

/* Seats in the seat's tier, itself included. */
guint qs_video_seat_peers(const QsVideoSeat *seat);
