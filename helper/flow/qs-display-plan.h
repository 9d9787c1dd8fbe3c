/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsDisplayPlan: everything that decides what one client's display channel sends next. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "flow/qs-bwe.h"
#include "flow/qs-scheduler.h"
#include "screen/qs-screen.h"
#include "util/qs-rect.h"

/*
 * One plan per client display channel. It owns the client's view of the
 * surface, the damage and the scheduler, the link estimates and the pacer,
 * the end-to-end probes, frame timing, which blocks the client holds lossy,
 * and the video streams' areas, codecs and bit rates. It takes facts in
 * (damage, heat snapshots, link facts, PONGs, stream reports, the clock)
 * and hands out one action at a time; it does no I/O, starts no thread and
 * reads no clock. The channel does what an action says (reads pixels,
 * encodes, frames, writes) and reports what came of it.
 *
 * The channel's loop, on every wake-up (damage, writable socket, PONG,
 * finished encode, the timer the last action asked for):
 *
 *     damage = take(watch); if (damage) qs_display_plan_damage(plan, damage, now);
 *     if (qs_display_plan_tick(plan, now)) qs_display_plan_heat(plan, snapshot, now);
 *     for (;;) {
 *         qs_display_plan_next(plan, now, &link, &action);
 *         if (action.kind is IDLE or WAIT) { arm a timer for action.wake_us; break; }
 *         carry it out, report it;
 *     }
 */

/* Up to this many streams at once; stream ids are < 64 (spice-gtk's
 * table). */
#define QS_PLAN_MAX_STREAMS 4
#define QS_PLAN_STREAM_IDS 64
/* A stream whose area has not changed this long ends. */
#define QS_PLAN_STREAM_END_US 300000
/* Streams' frame rate, and the highest QsPlanCaps.max_fps may ask for:
 * qemu's display refreshes every 30 ms, and rate control and the
 * scheduler's heat are tuned to it (flow/qs-scheduler.c). */
#define QS_PLAN_STREAM_FPS 30
/* A lossy block is resent losslessly once still this long (sooner when the
 * link is idle). */
#define QS_PLAN_REPAIR_US 500000
#define QS_PLAN_REPAIR_IDLE_US 150000

typedef enum {
    QS_PLAN_STREAM_H264,
    QS_PLAN_STREAM_MJPEG,
} QsPlanStreamCodec;

/* What the client can take and the encoders can make: given once. */
typedef struct {
    gboolean lz4;               /* the client decodes LZ4 images */
    gboolean jpeg;              /* ... JPEG images (it spoke for itself: display caps) */
    gboolean h264;              /* ... H.264 streams (MULTI_CODEC + CODEC_H264) */
    gboolean mjpeg;             /* ... MJPEG streams (every spice-gtk) */
    uint32_t max_stream_side;   /* the video encoders' bounds */
    uint32_t min_stream_bitrate;
    uint32_t max_stream_bitrate;
    uint32_t max_fps;           /* streams' frame rate, 1..QS_PLAN_STREAM_FPS; 0: that */
} QsPlanCaps;

typedef enum {
    QS_PLAN_IDLE,               /* nothing to send; ask again on new facts, or at wake_us if set */
    QS_PLAN_WAIT,               /* work waits for link room; ask again at wake_us, if set, or when writable */
    QS_PLAN_SURFACE_DESTROY,    /* the client's surface goes */
    QS_PLAN_SURFACE_CREATE,     /* a new surface: rect.width x rect.height */
    QS_PLAN_MARK,               /* the first full picture is out: MONITORS_CONFIG, MARK */
    QS_PLAN_PROBE,              /* a PING: qs_display_plan_probe_sent() */
    QS_PLAN_IMAGE,              /* read item.rect, encode, send: qs_display_plan_image_sent() */
    QS_PLAN_STREAM_CREATE,      /* stream `stream` at rect, codec, fps */
    QS_PLAN_STREAM_DESTROY,     /* stream `stream` ends; tell the client if `tell` */
    QS_PLAN_STREAM_FRAME,       /* read rect, encode a frame at bitrate: qs_display_plan_frame_done() */
    QS_PLAN_STREAM_FLUSH,       /* push the encoder's held frame: qs_display_plan_frame_done() */
} QsPlanKind;

typedef struct {
    QsPlanKind kind;
    int64_t wake_us;            /* IDLE, WAIT: absolute; 0 = none */
    /* IMAGE; STREAM_FRAME reads pixels of item.surface_serial */
    QsFlowItem item;
    gboolean lz4;               /* lossless as LZ4, else as SPICE LZ ... */
    gboolean bitmap;            /* ... unless the client asked for raw bitmaps */
    gboolean lossy_ok;          /* JPEG if the pixels are photographic (qs_display_plan_image_lossy) */
    int jpeg_quality;
    /* STREAM_*; SURFACE_CREATE uses rect's size */
    uint32_t stream;            /* SPICE stream id */
    QsRect rect;
    QsPlanStreamCodec codec;
    uint32_t fps;
    guint read_div;             /* FRAME, FLUSH: a frame is read every read_div / fps s (a lowered stream's > 1) */
    uint32_t bitrate;           /* CREATE, FRAME: the link's share, a ceiling (VBV) */
    int quality;                /* CREATE, FRAME: the target (H.264 CRF, MJPEG's top JPEG quality) */
    int64_t source_interval_us; /* FRAME: qemu's frame interval over rect; 0: not known */
    uint32_t est_bytes;         /* FRAME, FLUSH: counted as on its way until frame_done */
    uint32_t mm_time;           /* STREAM_CREATE: its stamp */
    uint32_t report_window;     /* STREAM_CREATE: frames per STREAM_REPORT to ask for */
    gboolean tell;              /* STREAM_DESTROY */
} QsPlanAction;

/* What the channel sees of its link at one moment. */
typedef struct {
    gboolean have_facts;        /* TCP_INFO could be read */
    QsLinkFacts facts;
    uint64_t conn_queued;       /* framed, not yet in the socket */
    uint64_t sent_bytes;        /* the channel's bytes so far (PING/PONG accounting) */
    gboolean can_send;          /* the client's ACK window is open */
} QsPlanLink;

/* What the plan decided over a session (the channel's summary line). */
typedef struct {
    uint64_t repairs;           /* lossy blocks resent lossless */
    uint64_t streams;           /* started */
    uint64_t frames_skipped;    /* replaced before they were read */
    uint64_t client_drops;      /* from STREAM_REPORT */
    uint64_t frames_starved;    /* came back starved (flow/qs-rate.h) */
    uint64_t rate_halvings;     /* a stream's frame rate halved for them */
} QsPlanStats;

typedef struct QsDisplayPlan QsDisplayPlan;

QsDisplayPlan *qs_display_plan_new(const QsPlanCaps *caps);
void qs_display_plan_free(QsDisplayPlan *plan);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsDisplayPlan, qs_display_plan_free)

/* The client asked for raw bitmaps (PREFERRED_COMPRESSION OFF), or named
 * MJPEG before H.264 (PREFERRED_VIDEO_CODEC_TYPE). */
void qs_display_plan_prefer_bitmap(QsDisplayPlan *plan, gboolean bitmap);
void qs_display_plan_prefer_mjpeg(QsDisplayPlan *plan, gboolean mjpeg);

/* A take of the screen watch. A new, resized or disabled surface queues
 * the surface actions (streams end first). A block map that does not
 * match the surface is dropped (a take raced a resize; the next one has
 * the new surface). */
void qs_display_plan_damage(QsDisplayPlan *plan, QsScreenDamage *damage, int64_t now_us);
/* Every wake-up, after the damage: ends streams whose area went still;
 * TRUE when stream detection wants a heat snapshot of the screen now. */
gboolean qs_display_plan_tick(QsDisplayPlan *plan, int64_t now_us);
/* The snapshot asked for (taken over): starts and ends streams. */
void qs_display_plan_heat(QsDisplayPlan *plan, QsScreenHeat *heat, int64_t now_us);

void qs_display_plan_next(QsDisplayPlan *plan, int64_t now_us, const QsPlanLink *link,
                          QsPlanAction *action);

/* IMAGE: JPEG rather than lossless for these pixels (the action's rect,
 * 4 bytes a pixel, rows packed). */
gboolean qs_display_plan_image_lossy(const QsPlanAction *action, const uint8_t *pixels);
/* IMAGE sent as `bytes` (lossy: JPEG). Not called when its pixels were
 * gone (a stale surface: the next damage redraws it). */
void qs_display_plan_image_sent(QsDisplayPlan *plan, const QsPlanAction *action,
                                gboolean lossy, uint32_t bytes, int64_t now_us);
/* PROBE: sent as PING `id` after `sent_bytes` of the channel's. */
void qs_display_plan_probe_sent(QsDisplayPlan *plan, int64_t now_us, uint32_t id,
                                uint64_t sent_bytes);
/* A PONG; TRUE when it frees room a waiting plan wants. */
gboolean qs_display_plan_pong(QsDisplayPlan *plan, int64_t now_us, uint32_t id);

/* What the encoder made of a FRAME or FLUSH. */
typedef struct {
    gboolean flush;             /* it went as a flush (a shared encoder may swap the two) */
    gboolean ok;                /* FALSE: the codec failed */
    gsize bytes;                /* encoded */
    gboolean needs_flush;       /* the codec holds a frame until the next one, at the
                                 * encoder and at the client's decoder, as H.264 does */
    gboolean starved;           /* the ceiling held it far below its quality target */
} QsPlanFrameDone;

/* FRAME or FLUSH came back from the encoder: `est_bytes` as the action
 * said. `done->ok`: returns the frame's multimedia time (`link` as now).
 * Not ok: the stream ends (told) and its codec is not used again; 0. */
uint32_t qs_display_plan_frame_done(QsDisplayPlan *plan, uint32_t stream, uint32_t est_bytes,
                                    const QsPlanFrameDone *done, const QsPlanLink *link,
                                    int64_t now_us);
/* A FRAME came back as a flush (an encoder shared with other viewers had
 * one due first): the stream's newest pixels are still to go. */
void qs_display_plan_stream_dirty(QsDisplayPlan *plan, uint32_t stream);
/* FRAME or FLUSH of a stream that ended meanwhile came back. */
void qs_display_plan_frame_dropped(QsDisplayPlan *plan, uint32_t est_bytes);
/* FRAME: its pixels could not be read (the surface went); the stream ends
 * untold, the surface's own actions follow. */
void qs_display_plan_frame_lost(QsDisplayPlan *plan, uint32_t stream, uint32_t est_bytes,
                                int64_t now_us);

/* STREAM_REPORT. TRUE when it ended a stream (the client cannot decode the
 * codec): ask for the next action. */
gboolean qs_display_plan_stream_report(QsDisplayPlan *plan, uint32_t stream, uint32_t unique_id,
                                       uint32_t end_frame_mm_time, uint32_t num_frames,
                                       uint32_t num_drops, int32_t last_frame_delay,
                                       int64_t now_us);

/* Every stream ends untold (the channel goes). */
void qs_display_plan_end_streams(QsDisplayPlan *plan, int64_t now_us);

/* TCP_NOTSENT_LOWAT the socket should have (one band). */
uint32_t qs_display_plan_notsent_lowat(const QsDisplayPlan *plan);
const QsBwe *qs_display_plan_bwe(const QsDisplayPlan *plan);
/* qs_bwe_pin_bandwidth() of the plan's estimate. */
void qs_display_plan_pin_bandwidth(QsDisplayPlan *plan, uint64_t bytes_per_s);
const QsPlanStats *qs_display_plan_stats(const QsDisplayPlan *plan);
/* The client's surface (tests). */
gboolean qs_display_plan_surface(const QsDisplayPlan *plan, uint32_t *width, uint32_t *height);
