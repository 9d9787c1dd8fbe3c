/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The display channel's shared state: protocol, send loop and streams (channels-internal). */
#pragma once

#include <glib.h>
#include <gio/gio.h>
#include <stdint.h>

#include "channels/qs-msg.h"
#include "channels/qs-session.h"
#include "encode/qs-video.h"
#include "flow/qs-bwe.h"
#include "flow/qs-e2e.h"
#include "flow/qs-frame-time.h"
#include "flow/qs-pacer.h"
#include "flow/qs-scheduler.h"
#include "screen/qs-screen.h"

/*
 * Who owns what:
 *   qs-display-channel.c  protocol: surfaces, MARK, client messages, timers
 *   qs-display-sender.c   the send loop: damage in, pacer budget, scheduler
 *                         picks, images (LZ4/JPEG), lossless repair
 *   qs-display-detect.c   where to stream: moving areas from the screen's
 *                         heat, exact rectangles
 *   qs-display-streams.c  video streams: lifecycle, frames encoded on a
 *                         worker thread, client reports
 *   qs-display-stats.c    what one session sent, logged at disconnect
 */

/* The client ACKs every window messages; the pacer binds long before. */
#define QS_DISPLAY_ACK_WINDOW 400
#define QS_DISPLAY_PING_MS 1000
#define QS_DISPLAY_MAX_STREAMS 4
/* A lossy block is resent losslessly once still this long (sooner when the
 * link is idle: QS_DISPLAY_REPAIR_IDLE_US). */
#define QS_DISPLAY_REPAIR_US 500000
#define QS_DISPLAY_REPAIR_IDLE_US 150000

typedef struct QsDisplayChannel QsDisplayChannel;
typedef struct QsDisplayStream QsDisplayStream;

/* Outlives the channel while worker tasks hold it: a finished encode whose
 * channel is gone finds dc == NULL and drops its frame. */
typedef struct {
    gint ref;
    QsDisplayChannel *dc;
} QsDisplayLife;

typedef struct {
    int64_t start_us;
    uint64_t messages;
    uint64_t images[3];         /* by QsImageCodec */
    uint64_t image_bytes;
    uint64_t repairs;           /* lossy blocks resent lossless */
    uint64_t streams;           /* started */
    uint64_t frames, frame_bytes, frames_skipped, flushes;
    uint64_t client_drops;      /* from STREAM_REPORT */
    uint64_t bytes_written;     /* last socket-level figure */
} QsDisplayStats;

struct QsDisplayStream {
    uint32_t id;                /* SPICE stream id, < 64 */
    QsRect rect;          /* even width and height */
    QsVideoEncoder *enc;        /* NULL while a worker holds it */
    QsVideoCodec codec;
    uint32_t fps;
    uint32_t last_stamp;        /* 0: none yet */
    uint32_t last_stamp_now;    /* server mm-time when it was made */
    gboolean dirty;             /* changed since the last frame was read */
    gboolean encoding;          /* a worker task is running */
    gboolean need_flush;        /* H.264: the last real frame needs a push */
    gboolean dead;              /* destroyed while encoding */
    int64_t last_change_us;     /* of any block in the rect */
    int64_t last_frame_us;      /* a frame was read */
    uint32_t frames;
    uint32_t drops_reported;
    uint32_t window_frames, window_drops;   /* reported since the last rate step */
    uint32_t bitrate;
};

struct QsDisplayChannel {
    QsChannel base;
    QsScreen *screen;
    QsScreenWatch *watch;
    GMainContext *context;
    QsDisplayLife *life;
    gboolean init_received;
    gboolean pumping;

    /* Surface as the client knows it. */
    gboolean surface_created;
    uint64_t serial;
    uint32_t width, height;
    gboolean mark_pending;      /* MONITORS_CONFIG + MARK after the first full image */

    /* Flow. */
    QsScheduler *sched;
    QsBwe *bwe;
    QsPacer *pacer;
    uint32_t notsent_lowat;
    QsE2e *e2e;                 /* the client's PONGs: end-to-end ACKs */
    QsFrameTime *frame_time;    /* how far ahead stream frames are stamped */
    uint64_t encoding_bytes;    /* picked, not yet written (worker encodes) */
    GSource *wake;              /* pacer / repair / flush deadline */
    int64_t wake_at;
    GSource *ping_timer;

    /* Per 16x16 block of the surface. */
    uint32_t cols, rows;
    int64_t *changed_us;        /* newest damage seen */
    int64_t *lossy_us;          /* client holds lossy pixels since; 0 = exact */
    int64_t next_repair_scan_us;
    int64_t last_heat_us;
    QsScreenHeat *heat;         /* the last snapshot (exact changed pixels) */

    /* Images. */
    uint8_t *pixels;            /* one item's pixels */
    size_t pixels_size;
    uint64_t image_id;
    gboolean prefer_bitmap;     /* PREFERRED_COMPRESSION OFF */

    /* Streams. */
    QsDisplayStream *streams[QS_DISPLAY_MAX_STREAMS];
    uint32_t next_stream_id;
    gboolean h264_ok;           /* client caps, and not refused by a report */
    gboolean mjpeg_ok;
    gboolean prefer_mjpeg;      /* PREFERRED_VIDEO_CODEC_TYPE lists MJPEG first */
    uint32_t stream_rate_pct;   /* of the link share; lowered on reported drops */

    QsDisplayStats stats;
};

/* qs-display-channel.c */
void qs_display_arm_wake(QsDisplayChannel *dc, int64_t at_us);
gboolean qs_display_ensure_surface(QsDisplayChannel *dc, const QsScreenDamage *damage,
                                   int64_t now_us);
void qs_display_send_mark(QsDisplayChannel *dc);
void qs_display_forget_surface(QsDisplayChannel *dc);
gboolean qs_display_send(QsDisplayChannel *dc, uint16_t type, GBytes *payload);

/* qs-display-sender.c */
void qs_display_sender_init(QsDisplayChannel *dc);
void qs_display_sender_clear(QsDisplayChannel *dc);
void qs_display_sender_reset(QsDisplayChannel *dc, int64_t now_us);
/* Socket facts into the estimator; returns bytes queued ahead of new work. */
uint64_t qs_display_link_queued(QsDisplayChannel *dc, int64_t now_us);
/* A PING whose PONG tells what the client has read (qs-e2e.h). */
void qs_display_send_probe(QsDisplayChannel *dc, int64_t now_us);
void qs_display_mark_exact(QsDisplayChannel *dc, const QsRect *r, int64_t lossy_us);

#define QS_STREAM_END_US 300000      /* no change this long: the stream ends */

/* qs-display-detect.c */
void qs_display_streams_detect(QsDisplayChannel *dc, int64_t now_us);
/* The damage map of one take: marks streams dirty. */
void qs_display_streams_damage(QsDisplayChannel *dc, QsScreenDamage *damage);
/* Every block of r changed entirely (moving content, not text beside it). */
gboolean qs_display_rect_all_moving(QsDisplayChannel *dc, const QsRect *r);

/* qs-display-streams.c */
void qs_display_stream_start(QsDisplayChannel *dc, guint slot, const QsRect *r,
                             uint32_t fps, int64_t now_us);
void qs_display_stream_end(QsDisplayChannel *dc, guint slot, gboolean tell_client,
                           int64_t now_us);
/* Starts frames the budget allows; TRUE if something was started. */
gboolean qs_display_streams_send(QsDisplayChannel *dc, int64_t now_us,
                                 const QsPacerBudget *budget);
/* Earliest time a stream needs attention (flush, end), or 0. */
int64_t qs_display_streams_deadline(QsDisplayChannel *dc, int64_t now_us);
gboolean qs_display_streams_intersect(QsDisplayChannel *dc, const QsRect *r);
void qs_display_streams_report(QsDisplayChannel *dc, const QsClientMsg *msg);
void qs_display_streams_preferred(QsDisplayChannel *dc, const uint8_t *codecs, uint32_t n);
void qs_display_streams_destroy_all(QsDisplayChannel *dc, gboolean tell_client);

/* qs-display-stats.c */
void qs_display_stats_log(QsDisplayChannel *dc);
