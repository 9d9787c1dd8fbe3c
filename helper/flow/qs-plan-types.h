/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The display plan's vocabulary: its bounds, the client's caps, the actions it hands out, the link it is told of. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "flow/qs-bwe.h"
#include "flow/qs-scheduler.h"
#include "util/qs-rect.h"

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

/* What the encoder made of a FRAME or FLUSH. */
typedef struct {
    gboolean flush;             /* it went as a flush (a shared encoder may swap the two) */
    gboolean ok;                /* FALSE: the codec failed */
    gsize bytes;                /* encoded */
    gboolean needs_flush;       /* the codec holds a frame until the next one, at the
                                 * encoder and at the client's decoder, as H.264 does */
    gboolean starved;           /* the ceiling held it far below its quality target */
} QsPlanFrameDone;
