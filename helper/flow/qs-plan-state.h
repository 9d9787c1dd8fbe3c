/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The display plan's state, by the file that owns each part, for the plan and its parts (flow-internal). */
#pragma once

#include "flow/qs-e2e.h"
#include "flow/qs-frame-time.h"
#include "flow/qs-pacer.h"
#include "flow/qs-plan-types.h"
#include "flow/qs-rate.h"
#include "screen/qs-screen.h"

/*
 * qs-display-plan.c    the client's surface, the action queue, next(), and
 *                      the plan's API: it calls the parts below, never
 *                      the other way
 * qs-plan-detect.c     where to stream: moving areas from the screen's
 *                      heat, the damage streams absorb; calls streams
 * qs-plan-streams.c    each stream's life, frames, bit rate and stamps,
 *                      the client's reports; calls images
 * qs-plan-images.c     which blocks the client holds lossy, repairs, the
 *                      lossless/lossy choice and JPEG quality
 */

typedef struct {
    uint32_t id;                /* SPICE stream id */
    QsRect rect;                /* even width and height */
    QsPlanStreamCodec codec;
    uint32_t fps;
    uint32_t bitrate;           /* the link's share for it now: the encoder's ceiling */
    int quality;                /* the encoder's target (flow/qs-rate.h) */
    uint32_t enc_bitrate;       /* what the encoder was told; 0 before its first frame */
    uint32_t last_stamp;        /* 0: none yet */
    uint32_t last_stamp_now;    /* server mm-time when it was made */
    gboolean dirty;             /* changed since the last frame was read */
    gboolean encoding;          /* a frame or flush is with the encoder */
    gboolean need_flush;        /* the encoder holds the last real frame */
    int64_t last_change_us;     /* of any block in the rect */
    int64_t last_frame_us;      /* a frame was read */
    int64_t source_us;          /* qemu's last picture here (QS_RATE_SAME_PICTURE_US apart) */
    int64_t source_interval_us; /* qemu's average frame interval here; 0: not known */
    uint32_t frames;
    uint32_t window_frames, window_drops;   /* reported since the last rate step */
    QsRateFit fit;              /* the frame rate's divisor (flow/qs-rate.h) */
} QsPlanStream;

/* qs-plan-images.c */
typedef struct {
    uint32_t cols, rows;
    int64_t *changed_us;        /* per block: newest damage seen */
    int64_t *lossy_us;          /* per block: the client holds lossy pixels since; 0 = exact */
    int64_t next_repair_scan_us;
    gboolean prefer_bitmap;     /* PREFERRED_COMPRESSION OFF */
    int jpeg_quality;           /* of the next lossy image (flow/qs-rate.h) */
} QsPlanImages;

/* qs-plan-streams.c and qs-plan-detect.c */
typedef struct {
    QsPlanStream *slot[QS_PLAN_MAX_STREAMS];
    uint32_t next_id;
    gboolean h264_ok, mjpeg_ok; /* the client's caps, less codecs that failed */
    gboolean prefer_mjpeg;
    uint32_t rate_pct;          /* of the link share; lowered on reported drops */
    int64_t last_heat_us;
    QsScreenHeat *heat;         /* the last snapshot (exact changed pixels) */
} QsPlanStreams;

struct QsDisplayPlan {
    QsPlanCaps caps;

    /* The surface as the client knows it. */
    gboolean surface;
    uint64_t serial;
    uint32_t width, height;
    gboolean mark_pending;      /* MARK after the first full picture */

    /* Actions decided outside next() (surface and stream changes), in order. */
    GArray *queue;              /* of QsPlanAction */

    QsScheduler *sched;
    QsBwe *bwe;
    QsPacer *pacer;
    QsE2e *e2e;
    QsFrameTime *frame_time;
    uint64_t bytes_written;     /* the socket's, from the last facts */
    uint64_t encoding_bytes;    /* handed to an encoder, not yet back */

    QsPlanImages images;
    QsPlanStreams streams;
    QsPlanStats stats;
};

/* Queues an action decided outside next() (a surface or stream change). */
static inline void qs_plan_push(QsDisplayPlan *plan, const QsPlanAction *action)
{
    g_array_append_val(plan->queue, *action);
}

/* What the path holds: the socket's queue, or what the PONGs say is
 * unread, whichever is more; plus what the encoders hold. Feeds `link`'s
 * facts to the estimator first. */
static inline uint64_t qs_plan_link_queued(QsDisplayPlan *plan, const QsPlanLink *link,
                                           int64_t now_us)
{
    uint64_t local = 0, e2e;

    if (link->have_facts) {
        qs_bwe_on_facts(plan->bwe, now_us, &link->facts);
        plan->bytes_written = link->facts.bytes_written;
        local = (uint64_t)link->facts.unsent_bytes + link->facts.in_flight_bytes;
    }
    local += link->conn_queued + plan->encoding_bytes;
    e2e = qs_e2e_in_flight(plan->e2e, plan->bwe, now_us, link->sent_bytes) + plan->encoding_bytes;
    return MAX(local, e2e);
}
