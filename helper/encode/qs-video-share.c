/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Video encodes shared by the viewers of one console: tiers, seats, the order of their frames. */
#include "encode/qs-video-share.h"

#include <stdlib.h>

typedef struct Tier Tier;

typedef struct {
    uint64_t seq;
    GBytes *data;               /* NULL: the slot is empty */
    gboolean flush;
    gboolean ok;
    gboolean needs_flush;
    gboolean starved;
    char *error;
} Made;

struct QsVideoShare {
    GPtrArray *tiers;           /* Tier *, not owned: a tier leaves when freed */
    QsEncodeQueue *queue;
    const QsShareRules *rules;
    gboolean enabled;
};

struct Tier {
    gint ref;                   /* seats, and a running encode */
    QsVideoShare *share;        /* NULL once the share is gone */
    QsEncodeQueue *queue;       /* the share's, kept while a seat may ask */
    const QsShareRules *rules;
    QsVideoShape shape;
    int rate_class;
    guint read_div;             /* its seats' plans read a frame every read_div / fps s */
    gboolean solo;              /* a seat that fell behind: nobody joins */
    QsVideoEncoder *enc;        /* NULL before the first frame and while a worker has it */
    GPtrArray *seats;           /* QsVideoSeat *, not owned */
    uint64_t next_seq;          /* of the next encode to start */
    gboolean encoding;          /* next_seq - 1 is with a worker */
    uint64_t key_seq;           /* this encode must be a keyframe (joiners), if key_due */
    gboolean key_due;
    /* What the head asked while an encode ran: the newest pixels win, and a
     * frame stands in for a flush. */
    gboolean queued;
    gboolean queued_flush;
    uint8_t *queued_pixels;
    int64_t queued_interval_us;
    const QsVideoSeat *queued_by;   /* compared, never followed */
    Made ring[QS_VIDEO_SHARE_RING];
};

struct QsVideoSeat {
    Tier *tier;
    uint64_t next;              /* the seq it takes next */
    gboolean fresh;             /* no keyframe of this tier yet */
    gboolean pending;           /* a request waits for its answer */
    uint32_t bitrate;
    guint read_div;
    int64_t caught_up_us;       /* when it last jumped to the head */
    GSource *answer;            /* an answer from the ring, on its way */
    QsVideoSeatFunc func;
    gpointer data;
};

typedef struct {
    Tier *tier;
    QsVideoEncoder *enc;
    uint64_t seq;
    gboolean flush, force_key;
    uint8_t *pixels;
    uint32_t bitrate;
    int64_t source_interval_us;
    const QsVideoSeat *origin;      /* compared, never followed */
    QsVideoFrame frame;
    gboolean ok;
    GError *error;
} Job;

QsVideoShare *qs_video_share_new(QsEncodeQueue *queue, const QsShareRules *rules,
                                 gboolean enabled)
{
    QsVideoShare *share = g_new0(QsVideoShare, 1);

    share->tiers = g_ptr_array_new();
    share->queue = qs_encode_queue_ref(queue);
    share->rules = rules;
    share->enabled = enabled;
    return share;
}

void qs_video_share_free(QsVideoShare *share)
{
    if (!share) {
        return;
    }
    for (guint i = 0; i < share->tiers->len; i++) {
        ((Tier *)g_ptr_array_index(share->tiers, i))->share = NULL;
    }
    g_ptr_array_free(share->tiers, TRUE);
    qs_encode_queue_unref(share->queue);
    g_free(share);
}

guint qs_video_share_n_tiers(const QsVideoShare *share)
{
    return share->tiers->len;
}

static void made_clear(Made *m)
{
    g_clear_pointer(&m->data, g_bytes_unref);
    g_clear_pointer(&m->error, g_free);
    m->ok = FALSE;
    m->starved = FALSE;
}

static void tier_unref(Tier *t)
{
    if (!g_atomic_int_dec_and_test(&t->ref)) {
        return;
    }
    if (t->share) {
        g_ptr_array_remove_fast(t->share->tiers, t);
    }
    for (guint i = 0; i < QS_VIDEO_SHARE_RING; i++) {
        made_clear(&t->ring[i]);
    }
    g_free(t->queued_pixels);
    qs_video_encoder_free(t->enc);
    g_ptr_array_free(t->seats, TRUE);
    qs_encode_queue_unref(t->queue);
    g_free(t);
}

/* `share` may be gone (NULL): then `queue` and `rules` are the tier's
 * that the seat leaves. */
static Tier *tier_new(QsVideoShare *share, QsEncodeQueue *queue, const QsShareRules *rules,
                      const QsVideoShape *shape, guint read_div, gboolean solo)
{
    Tier *t = g_new0(Tier, 1);

    t->ref = 0;
    t->queue = qs_encode_queue_ref(queue);
    t->rules = rules;
    t->shape = *shape;
    t->rate_class = rules->rate_class(shape->bitrate);
    t->read_div = read_div;
    t->solo = solo || !share || !share->enabled;
    t->seats = g_ptr_array_new();
    t->next_seq = 1;
    if (share) {
        t->share = share;
        g_ptr_array_add(share->tiers, t);
    }
    return t;
}

/* A tier others may join with this shape, class and frame rate, other
 * than `not`. */
static Tier *tier_find(QsVideoShare *share, const QsVideoShape *s, int cls, guint read_div,
                       const Tier *not)
{
    for (guint i = 0; share && i < share->tiers->len; i++) {
        Tier *t = g_ptr_array_index(share->tiers, i);

        if (t != not && !t->solo && t->shape.codec == s->codec && t->shape.x == s->x &&
            t->shape.y == s->y && t->shape.width == s->width &&
            t->shape.height == s->height && t->shape.fps == s->fps &&
            t->shape.quality == s->quality && t->rate_class == cls &&
            t->read_div == read_div) {
            return t;
        }
    }
    return NULL;
}

static const Made *ring_get(const Tier *t, uint64_t seq)
{
    const Made *m = &t->ring[seq % QS_VIDEO_SHARE_RING];

    return m->seq == seq && (m->data || m->error || m->ok) ? m : NULL;
}

/* The seat goes to the head of its tier; its next frame is a keyframe. */
static void seat_restart(QsVideoSeat *seat)
{
    Tier *t = seat->tier;

    seat->next = t->next_seq;
    seat->fresh = TRUE;
    t->key_seq = t->next_seq;
    t->key_due = TRUE;
}

static void seat_join(QsVideoSeat *seat, Tier *t)
{
    g_atomic_int_inc(&t->ref);
    g_ptr_array_add(t->seats, seat);
    seat->tier = t;
    seat_restart(seat);
    if (t->seats->len > 1) {
        g_message("display: a %ux%u stream at (%d,%d) shares its encoder with %u other "
                  "viewer%s", t->shape.width, t->shape.height, t->shape.x, t->shape.y,
                  t->seats->len - 1, t->seats->len > 2 ? "s" : "");
    }
}

static void seat_leave(QsVideoSeat *seat)
{
    Tier *t = g_steal_pointer(&seat->tier);

    g_ptr_array_remove_fast(t->seats, seat);
    tier_unref(t);
}

QsVideoSeat *qs_video_seat_new(QsVideoShare *share, const QsVideoShape *shape,
                                 QsVideoSeatFunc func, gpointer data)
{
    QsVideoSeat *seat = g_new0(QsVideoSeat, 1);
    Tier *t = share->enabled
                  ? tier_find(share, shape, share->rules->rate_class(shape->bitrate), 1, NULL)
                  : NULL;

    seat->func = func;
    seat->data = data;
    seat->bitrate = shape->bitrate;
    seat->read_div = 1;         /* a new stream reads at its nominal rate */
    seat_join(seat, t ? t : tier_new(share, share->queue, share->rules, shape, 1, FALSE));
    return seat;
}

void qs_video_seat_free(QsVideoSeat *seat)
{
    if (!seat) {
        return;
    }
    if (seat->answer) {
        g_source_destroy(seat->answer);
        g_source_unref(seat->answer);
    }
    seat_leave(seat);
    g_free(seat);
}

guint qs_video_seat_peers(const QsVideoSeat *seat)
{
    return seat->tier->seats->len;
}

/* Off to `to`, or to a tier of its own (`solo`: nobody joins it): at its
 * head, a keyframe. */
static void seat_move(QsVideoSeat *seat, Tier *to, gboolean solo)
{
    const Tier *from = seat->tier;
    QsVideoShape shape = from->shape;

    shape.bitrate = seat->bitrate;
    if (!to) {
        to = tier_new(from->share, from->queue, from->rules, &shape, seat->read_div, solo);
    }
    seat_leave(seat);
    seat_join(seat, to);
}

gboolean qs_video_seat_needs_pixels(QsVideoSeat *seat, uint32_t bitrate, guint read_div)
{
    Tier *t = seat->tier;
    uint64_t oldest = t->next_seq > QS_VIDEO_SHARE_RING + (t->encoding ? 1 : 0)
                          ? t->next_seq - QS_VIDEO_SHARE_RING - (t->encoding ? 1 : 0)
                          : 1;
    uint64_t behind = t->next_seq - seat->next;
    int64_t now = g_get_monotonic_time();

    g_return_val_if_fail(!seat->pending, FALSE);
    seat->bitrate = bitrate;
    seat->read_div = MAX(read_div, 1u);
    switch (t->rules->lag(behind, seat->next < oldest, t->seats->len, seat->caught_up_us, now)) {
    case QS_SHARE_RESTART:
        seat_restart(seat);
        break;
    case QS_SHARE_CATCH_UP:
        g_debug("display: a viewer %" G_GUINT64_FORMAT " frames behind its shared stream "
                "catches up at a keyframe", behind);
        seat->caught_up_us = now;
        seat_restart(seat);
        break;
    case QS_SHARE_GO_SOLO:
        g_message("display: a viewer fell %" G_GUINT64_FORMAT
                  " frames behind its shared stream again; it goes on with an encoder of its "
                  "own", behind);
        seat_move(seat, NULL, TRUE);
        break;
    case QS_SHARE_KEEP:
        if (!t->solo) {
            QsVideoShape shape = t->shape;
            int cls = t->rules->rate_class(bitrate);
            Tier *other;

            shape.bitrate = bitrate;
            other = tier_find(t->share, &shape, cls, seat->read_div, t);
            switch (t->rules->move(t->seats->len, other != NULL, bitrate, t->rate_class,
                                   seat->read_div, t->read_div)) {
            case QS_SHARE_JOIN:
                seat_move(seat, other, FALSE);
                break;
            case QS_SHARE_FOLLOW:
                t->rate_class = cls;
                t->read_div = seat->read_div;
                break;
            case QS_SHARE_LEAVE:
                g_debug("display: a viewer's stream at %u kbit/s, 1/%u of its frame rate, "
                        "leaves a shared encoder at 1/%u", bitrate / 1000, seat->read_div,
                        t->read_div);
                seat_move(seat, other, FALSE);
                break;
            case QS_SHARE_STAY:
                break;
            }
        }
        break;
    }
    return seat->next == seat->tier->next_seq;
}

static void answer(QsVideoSeat *seat, const Made *m, gboolean shared)
{
    QsSharedFrame f = { 0 };

    if (m) {
        f = (QsSharedFrame){ m->data, m->flush, m->ok, m->needs_flush, shared, m->error,
                             m->starved };
        seat->next = m->seq + 1;
        if (m->ok && !m->flush) {
            seat->fresh = FALSE;
        }
    } else {
        f.ok = TRUE;            /* nothing was due (a fresh seat's flush) */
        f.flush = TRUE;
    }
    seat->pending = FALSE;
    seat->func(seat, &f, seat->data);
}

static gboolean on_answer(gpointer data)
{
    QsVideoSeat *seat = data;
    const Made *m = ring_get(seat->tier, seat->next);

    g_source_unref(g_steal_pointer(&seat->answer));
    answer(seat, m, TRUE);
    return G_SOURCE_REMOVE;
}

static void answer_later(QsVideoSeat *seat)
{
    seat->answer = g_idle_source_new();
    g_source_set_callback(seat->answer, on_answer, seat, NULL);
    g_source_attach(seat->answer, g_main_context_get_thread_default());
}

static void start_encode(Tier *t, gboolean flush, uint8_t *pixels, int64_t interval_us,
                         const QsVideoSeat *origin);

/* On a worker: the tier's shape is fixed, the rest is the job's own. */
static void encode_thread(gpointer data)
{
    Job *job = data;
    const QsVideoShape *s = &job->tier->shape;

    if (!job->enc) {
        job->enc = qs_video_encoder_new(s->codec, s->width, s->height, s->fps, job->bitrate,
                                        s->quality, &job->error);
        if (!job->enc) {
            return;
        }
    } else if (qs_video_encoder_get_bitrate(job->enc) != job->bitrate) {
        qs_video_encoder_set_bitrate(job->enc, job->bitrate);
    }
    if (job->flush) {
        job->ok = qs_video_encoder_flush(job->enc, &job->frame, &job->error);
    } else {
        qs_video_encoder_set_source_interval(job->enc, job->source_interval_us);
        job->ok = qs_video_encoder_encode(job->enc, job->pixels, (size_t)s->width * 4,
                                          job->force_key, &job->frame, &job->error);
    }
}

static void job_free(Job *job)
{
    g_free(job->pixels);
    g_clear_pointer(&job->frame.data, g_bytes_unref);
    g_clear_error(&job->error);
    qs_video_encoder_free(job->enc);
    g_free(job);
}

static void encode_done(gpointer data)
{
    Job *job = data;
    Tier *t = job->tier;
    Made *m = &t->ring[job->seq % QS_VIDEO_SHARE_RING];
    g_autoptr(GPtrArray) due = g_ptr_array_new();

    t->encoding = FALSE;
    t->enc = g_steal_pointer(&job->enc);
    made_clear(m);
    m->seq = job->seq;
    m->flush = job->flush;
    m->ok = job->ok && !job->error;
    m->needs_flush = t->enc && qs_video_encoder_needs_flush(t->enc);
    m->starved = job->frame.starved;
    if (m->ok) {
        m->data = g_steal_pointer(&job->frame.data);
    } else {
        m->error = g_strdup(job->error ? job->error->message : "encoder failed");
    }
    /* Answers first (a seat's func may free seats), then the next encode. */
    for (guint i = 0; i < t->seats->len; i++) {
        QsVideoSeat *seat = g_ptr_array_index(t->seats, i);

        if (seat->pending && !seat->answer && seat->next == job->seq) {
            g_ptr_array_add(due, seat);
        }
    }
    g_atomic_int_inc(&t->ref);
    for (guint i = 0; i < due->len; i++) {
        QsVideoSeat *seat = g_ptr_array_index(due, i);

        /* Still seated here (an earlier answer may have ended it)? */
        if (g_ptr_array_find(t->seats, seat, NULL) && seat->pending) {
            answer(seat, m, seat != job->origin);
        }
    }
    /* An answer's func may have asked again and started an encode. */
    if (t->queued && !t->encoding && t->seats->len > 0) {
        t->queued = FALSE;
        start_encode(t, t->queued_flush, g_steal_pointer(&t->queued_pixels),
                     t->queued_interval_us, t->queued_by);
    }
    job_free(job);
    tier_unref(t);              /* the worker's */
    tier_unref(t);
}

static void start_encode(Tier *t, gboolean flush, uint8_t *pixels, int64_t interval_us,
                         const QsVideoSeat *origin)
{
    Job *job = g_new0(Job, 1);
    g_autofree uint32_t *rates = g_new(uint32_t, MAX(t->seats->len, 1u));

    for (guint i = 0; i < t->seats->len; i++) {
        rates[i] = ((QsVideoSeat *)g_ptr_array_index(t->seats, i))->bitrate;
    }
    if (flush && t->key_due && t->key_seq == t->next_seq) {
        /* A flush cannot be the joiners' keyframe: they skip it and take
         * the next frame, which will be one. */
        for (guint i = 0; i < t->seats->len; i++) {
            QsVideoSeat *seat = g_ptr_array_index(t->seats, i);

            if (seat->fresh && seat->next == t->next_seq) {
                seat->next++;
            }
        }
        t->key_seq++;
    }
    /* Whoever waits at the head is answered by this encode: what was
     * queued for it is older. */
    if (t->queued_pixels != pixels) {
        g_clear_pointer(&t->queued_pixels, g_free);
    }
    t->queued_pixels = NULL;
    t->queued = FALSE;
    job->tier = t;
    g_atomic_int_inc(&t->ref);
    job->enc = g_steal_pointer(&t->enc);
    job->seq = t->next_seq++;
    job->flush = flush;
    job->pixels = pixels;
    job->origin = origin;
    job->source_interval_us = interval_us;
    job->bitrate = t->rules->tier_rate(rates, t->seats->len, t->shape.bitrate);
    job->force_key = !flush && t->key_due && t->key_seq == job->seq;
    if (job->force_key) {
        t->key_due = FALSE;
    }
    t->encoding = TRUE;
    qs_encode_queue_push(t->queue, encode_thread, encode_done, job);
}

void qs_video_seat_request(QsVideoSeat *seat, gboolean flush, uint8_t *pixels,
                            int64_t source_interval_us)
{
    Tier *t = seat->tier;

    g_return_if_fail(!seat->pending);
    seat->pending = TRUE;
    if (ring_get(t, seat->next) && seat->next < t->next_seq) {
        g_free(pixels);
        answer_later(seat);
    } else if (seat->next < t->next_seq) {
        g_free(pixels);             /* its frame is with the worker */
    } else if (flush && seat->fresh) {
        g_free(pixels);             /* nothing of this tier to push out yet */
        answer_later(seat);
    } else if (!t->encoding) {
        g_return_if_fail(flush || pixels);
        start_encode(t, flush, pixels, source_interval_us, seat);
    } else if (!flush && pixels) {
        g_free(t->queued_pixels);
        t->queued_pixels = pixels;
        t->queued_interval_us = source_interval_us;
        t->queued_flush = FALSE;
        t->queued = TRUE;
        t->queued_by = seat;
    } else if (!t->queued) {
        t->queued = TRUE;
        t->queued_flush = TRUE;
        t->queued_by = seat;
    }
}
