/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The display plan's state, by the file that owns each part (flow-internal). */
#pragma once

#include "flow/qs-display-plan.h"
#include "flow/qs-e2e.h"
#include "flow/qs-frame-time.h"
#include "flow/qs-pacer.h"
#include "flow/qs-rate.h"

/*
 * qs-display-plan.c    the client's surface, the action queue, next()
 * qs-plan-images.c     which blocks the client holds lossy, repairs, the
 *                      lossless/lossy choice and JPEG quality
 * qs-plan-detect.c     where to stream: moving areas from the screen's
 *                      heat, the damage streams absorb
 * qs-plan-streams.c    each stream's life, frames, bit rate and stamps,
 *                      the client's reports
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

/* qs-display-plan.c */
void qs_plan_push(QsDisplayPlan *plan, const QsPlanAction *action);
/* What the path holds: the socket's queue, or what the PONGs say is
 * unread, whichever is more; plus what the encoders hold. Feeds `link`'s
 * facts to the estimator first. */
uint64_t qs_plan_link_queued(QsDisplayPlan *plan, const QsPlanLink *link, int64_t now_us);

/* qs-plan-images.c */
void qs_plan_images_clear(QsDisplayPlan *plan);
/* A new surface of plan->width x plan->height. */
void qs_plan_images_reset(QsDisplayPlan *plan);
void qs_plan_images_damage(QsDisplayPlan *plan, const QsScreenDamage *damage);
/* Blocks entirely inside r hold exact pixels now (lossy_us 0), or lossy
 * ones sent at lossy_us; edge blocks keep what they had unless lossy. */
void qs_plan_images_mark(QsDisplayPlan *plan, const QsRect *r, int64_t lossy_us);
/* Lossy blocks still long enough go back to the scheduler; when. */
void qs_plan_images_repair(QsDisplayPlan *plan, int64_t now_us);
/* Fills an IMAGE action for a picked item. */
void qs_plan_images_fill(QsDisplayPlan *plan, const QsFlowItem *item, QsPlanAction *action);

/* qs-plan-streams.c */
void qs_plan_stream_start(QsDisplayPlan *plan, guint slot, const QsRect *r, uint32_t fps,
                          int64_t now_us);
/* The stream in `slot` ends; the client is told if `tell`. */
void qs_plan_stream_end(QsDisplayPlan *plan, guint slot, gboolean tell, int64_t now_us);
void qs_plan_streams_init(QsDisplayPlan *plan);
void qs_plan_streams_clear(QsDisplayPlan *plan);
/* Every stream ends; the client is told if `tell`. */
void qs_plan_streams_end_all(QsDisplayPlan *plan, gboolean tell, int64_t now_us);
gboolean qs_plan_streams_intersect(const QsDisplayPlan *plan, const QsRect *r);
/* A frame or flush the budget allows, as an action; FALSE if none. */
gboolean qs_plan_streams_next(QsDisplayPlan *plan, int64_t now_us,
                              const QsPacerBudget *budget, QsPlanAction *action);
/* Earliest time a stream needs attention (a frame, a flush, its end), or 0. */
int64_t qs_plan_streams_deadline(const QsDisplayPlan *plan, int64_t now_us);

/* qs-plan-detect.c */
/* Marks streams the damage touches; drops the damage their edge blocks
 * carry already. */
void qs_plan_streams_damage(QsDisplayPlan *plan, QsScreenDamage *damage);
/* Every block of r changed entirely in the last heat snapshot. */
gboolean qs_plan_streams_all_moving(const QsDisplayPlan *plan, const QsRect *r);
