/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The display channel's state, shared by the channel and its parts (channels-internal). */
#pragma once

#include <glib.h>
#include <gio/gio.h>
#include <stdint.h>

#include "channels/qs-display-channel.h"
#include "wire/qs-msg.h"
#include "channels/qs-image-share.h"
#include "channels/qs-session.h"
#include "encode/qs-encode-queue.h"
#include "encode/qs-video-share.h"
#include "encode/qs-video.h"
#include "flow/qs-display-plan.h"
#include "screen/qs-screen.h"

/*
 * What to send and when is the plan's (flow/qs-display-plan.h); the
 * channel reads pixels, calls the encoders, frames and writes.
 *   qs-display-channel.c  the channel: client messages, timers, the loop
 *                         (facts into the plan, its actions handed to the
 *                         parts), the channel's life
 * and its parts, which use this header and each other, never the
 * channel's own functions (a late answer comes back through `pump`):
 *   qs-display-sender.c   the link facts, and the actions that send at once:
 *                         surfaces, marks, probes
 *   qs-display-image.c    images, encoded on a worker one at a time
 *   qs-display-video.c    each stream's encoder, frames encoded on a worker
 *   qs-display-stats.c    what one session sent, logged at disconnect
 */

/* The client ACKs every window messages; the pacer binds long before. */
#define QS_DISPLAY_ACK_WINDOW 400
#define QS_DISPLAY_PING_MS 1000

typedef struct QsDisplayChannel QsDisplayChannel;
typedef struct QsDisplayVideo QsDisplayVideo;
typedef struct QsDisplayImageJob QsDisplayImageJob;

typedef struct {
    int64_t start_us;
    uint64_t messages;
    uint64_t images[4];         /* by QsImageCodec */
    uint64_t image_bytes;
    uint64_t shared_images;     /* lossless images another viewer's session made */
    uint64_t frames, frame_bytes, flushes;
    uint64_t shared_frames;     /* encoded for another viewer of the console */
    uint64_t bytes_written;     /* last socket-level figure */
    uint64_t pumps, heat_snapshots; /* main-loop wake-ups spent on the plan */
} QsDisplayStats;

/* One stream while the client has it: its seat at a (maybe shared)
 * encoder (encode/qs-video-share.h). */
struct QsDisplayVideo {
    QsDisplayChannel *dc;
    uint32_t id;                /* SPICE stream id */
    QsVideoCodec codec;
    QsVideoSeat *seat;
    gboolean encoding;          /* a frame is asked for and not answered yet */
    gboolean asked_flush;
    uint32_t est_bytes;         /* the plan's estimate of the frame asked for */
};

struct QsDisplayChannel {
    QsChannel base;
    QsScreen *screen;
    QsScreenWatch *watch;
    GMainContext *context;
    const QsDisplayClock *clock;    /* NULL: the real one */
    QsVideoShare *streams;      /* the console's, for its viewers' streams */
    QsImageShare *images;       /* the console's lossless images, a reference */
    QsDisplayPlan *plan;
    /* qs_display_channel_pump, for a part whose work ends later (a frame
     * from a worker): the loop goes on. */
    void (*pump)(QsChannel *ch);
    gboolean init_received;
    gboolean pumping;
    uint32_t notsent_lowat;
    GSource *wake;              /* the time the plan asked to be asked again */
    int64_t wake_at;
    GSource *ping_timer;

    QsEncodeQueue *encodes;     /* the workers images are encoded on */
    QsDisplayImageJob *image_job;   /* the image being encoded; the plan waits */
    uint8_t *pixels;            /* one image's pixels, when none is encoding */
    size_t pixels_size;
    uint64_t image_id;

    QsDisplayVideo *videos[QS_PLAN_MAX_STREAMS];
    QsDisplayStats stats;
};

/* qs-display-sender.c */
/* One message, counted. */
gboolean qs_display_send(QsDisplayChannel *dc, uint16_t type, GBytes *payload);
/* What the channel sees of its link now (socket facts, its own queue). */
void qs_display_link(QsDisplayChannel *dc, QsPlanLink *link);
/* A PING, and the plan told of it. */
void qs_display_send_probe(QsDisplayChannel *dc, int64_t now_us);
/* SURFACE_CREATE / _DESTROY, MARK or PROBE: sent now. */
void qs_display_send_action(QsDisplayChannel *dc, const QsPlanAction *action, int64_t now_us);

/* qs-display-image.c */
/* IMAGE: reads the pixels and sends it now (TRUE: a copy another viewer's
 * session made, or nothing, the surface having gone) or once a worker has
 * encoded it (FALSE: dc->image_job until then; the pump resumes then). */
gboolean qs_display_image_send(QsDisplayChannel *dc, const QsPlanAction *action);
/* The channel goes: an encode still running is answered to nobody. */
void qs_display_image_forget(QsDisplayChannel *dc);

/* qs-display-video.c */
void qs_display_video_create(QsDisplayChannel *dc, const QsPlanAction *action);
void qs_display_video_destroy(QsDisplayChannel *dc, const QsPlanAction *action);
/* FRAME or FLUSH: reads the pixels (a frame) and starts the encode. */
void qs_display_video_encode(QsDisplayChannel *dc, const QsPlanAction *action, int64_t now_us);
/* Every stream's encoder goes (the channel goes). */
void qs_display_video_free_all(QsDisplayChannel *dc);

/* qs-display-stats.c */
void qs_display_stats_log(QsDisplayChannel *dc);
