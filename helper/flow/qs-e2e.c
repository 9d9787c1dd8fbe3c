/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What one client has read, as its PONGs to our PINGs tell, end to end. */
#include "flow/qs-e2e.h"
#include "flow/qs-idle-marks.h"

/*
 * Why a span of at least one min RTT, and never under QS_E2E_SPAN_MIN_US, for
 * a rate sample: PONGs come back in bursts (the client reads several
 * messages per wake-up, the return path batches, a 1500-byte packet takes 6
 * ms at 2 Mbit), so the rate between two neighbouring PONGs can be many
 * times the path's; measured behind a 2 Mbit tbf with a 3 ms min RTT, spans
 * of a few ms read up to 20 Mbit. Over 50 ms the bursts average out. Why drop older probes on
 * a PONG: the stream is in order, so a later PONG covers them, and a client
 * that skips a PING (none does) must not pin a slot forever.
 *
 * Why a span that reads only a backlog counts as the link's whatever the
 * idle marks say: a mark says the sender ran out of work, not that the link
 * waited for it. Bytes that were queued on the path when a span began
 * drained at the link's pace, so a sender whose frames outrun the link
 * learns its rate as measured even if it pauses between frames.
 */

#define SNAPS 16

typedef struct {
    uint32_t id;
    int64_t sent_us;
    uint64_t bytes;
} Probe;

typedef struct {
    int64_t t;
    uint64_t acked;
    uint64_t queued;                  /* sent at least one min RTT before t */
} Snap;

struct QsE2e {
    Probe probe[QS_E2E_PROBES];
    unsigned head, len;               /* ring, oldest at head */
    int64_t last_probe_us;
    uint64_t last_probe_bytes;
    gboolean probed;
    int64_t first_probe_us;

    gboolean have_ack;
    uint64_t acked;
    int64_t acked_us;
    uint64_t pongs;

    Snap snap[SNAPS];
    unsigned snap_head, snap_len;     /* snap_head: the newest */

    QsIdleMarks idle;                 /* in sent bytes */

    uint64_t round_end;               /* a round ends when this is read */
    gboolean round_unlimited;         /* a full-speed sample in this round */
};

QsE2e *qs_e2e_new(void)
{
    return g_new0(QsE2e, 1);
}

void qs_e2e_free(QsE2e *e2e)
{
    g_free(e2e);
}

static int64_t spacing_us(const QsBwe *bwe)
{
    return MAX((int64_t)qs_bwe_min_rtt_us(bwe) / 4, QS_E2E_PROBE_MIN_US);
}

gboolean qs_e2e_probe_due(const QsE2e *e2e, const QsBwe *bwe, int64_t now_us,
                          uint64_t sent_bytes, gboolean at_rest)
{
    if (e2e->len >= QS_E2E_PROBES) {
        return FALSE;
    }
    if (!e2e->probed) {
        return sent_bytes > 0;
    }
    if (sent_bytes <= e2e->last_probe_bytes) {
        return FALSE;
    }
    return at_rest || now_us - e2e->last_probe_us >= spacing_us(bwe);
}

void qs_e2e_probe_sent(QsE2e *e2e, int64_t now_us, uint32_t id, uint64_t sent_bytes)
{
    if (e2e->len == QS_E2E_PROBES) {
        /* The oldest can no longer be matched; its PONG would be news of
         * an older point anyway. */
        e2e->head = (e2e->head + 1) % QS_E2E_PROBES;
        e2e->len--;
    }
    e2e->probe[(e2e->head + e2e->len) % QS_E2E_PROBES] = (Probe){ id, now_us, sent_bytes };
    e2e->len++;
    if (!e2e->probed) {
        e2e->first_probe_us = now_us;
    }
    e2e->probed = TRUE;
    e2e->last_probe_us = now_us;
    e2e->last_probe_bytes = sent_bytes;
}

/* How far the stream reached one min RTT before a PONG came back, as the
 * probes still out say. Unhindered, bytes sent that early would have been
 * read before the PONG's PING was, yet they come after it in the stream:
 * they were queued on the path when it was read. */
static uint64_t queued_by(const QsE2e *e2e, const QsBwe *bwe, int64_t now_us, uint64_t acked)
{
    int64_t before = now_us - (int64_t)qs_bwe_min_rtt_us(bwe);
    uint64_t reach = acked;

    for (unsigned i = 0; i < e2e->len; i++) {
        const Probe *p = &e2e->probe[(e2e->head + i) % QS_E2E_PROBES];

        if (p->sent_us > before) {
            break;
        }
        reach = MAX(reach, p->bytes);
    }
    return reach;
}

static void push_snap(QsE2e *e2e, int64_t now_us, uint64_t acked, uint64_t queued)
{
    e2e->snap_head = (e2e->snap_head + 1) % SNAPS;
    e2e->snap[e2e->snap_head] = (Snap){ now_us, acked, queued };
    if (e2e->snap_len < SNAPS) {
        e2e->snap_len++;
    }
}

static int64_t span_us(const QsBwe *bwe)
{
    return MAX((int64_t)qs_bwe_min_rtt_us(bwe), QS_E2E_SPAN_MIN_US);
}

/* Rate over the newest span of at least span_us() ending now. */
static void sample_delivery(QsE2e *e2e, QsBwe *bwe, int64_t now_us, uint64_t acked)
{
    int64_t span = span_us(bwe);

    for (unsigned i = 0; i < e2e->snap_len; i++) {
        const Snap *s = &e2e->snap[(e2e->snap_head + SNAPS - i) % SNAPS];

        if (now_us - s->t < span) {
            continue;
        }
        if (acked > s->acked) {
            gboolean limited = s->queued < acked &&
                               qs_idle_marks_span_limited(&e2e->idle, s->acked, acked);

            qs_bwe_on_delivery(bwe, now_us, acked - s->acked, now_us - s->t, limited);
            e2e->round_unlimited |= !limited;
        }
        return;
    }
}

gboolean qs_e2e_on_pong(QsE2e *e2e, QsBwe *bwe, int64_t now_us, uint32_t id)
{
    unsigned i;
    Probe p;

    for (i = 0; i < e2e->len; i++) {
        if (e2e->probe[(e2e->head + i) % QS_E2E_PROBES].id == id) {
            break;
        }
    }
    if (i == e2e->len) {
        return FALSE;
    }
    p = e2e->probe[(e2e->head + i) % QS_E2E_PROBES];
    e2e->head = (e2e->head + i + 1) % QS_E2E_PROBES;
    e2e->len -= i + 1;
    if (now_us < p.sent_us || (e2e->have_ack && p.bytes < e2e->acked)) {
        return FALSE;
    }
    qs_bwe_on_rtt_sample(bwe, now_us, (uint32_t)MIN(now_us - p.sent_us, G_MAXUINT32));
    sample_delivery(e2e, bwe, now_us, p.bytes);
    /* Spacing the snapshots by a quarter span keeps 16 of them covering
     * four spans. */
    if (!e2e->snap_len || now_us - e2e->snap[e2e->snap_head].t >= span_us(bwe) / 4) {
        push_snap(e2e, now_us, p.bytes, queued_by(e2e, bwe, now_us, p.bytes));
    }
    e2e->have_ack = TRUE;
    e2e->acked = p.bytes;
    e2e->acked_us = now_us;
    e2e->pongs++;
    if (p.bytes >= e2e->round_end) {
        /* Everything sent when the round began has been read. */
        qs_bwe_on_e2e_round(bwe, e2e->round_unlimited);
        e2e->round_end = e2e->last_probe_bytes;
        e2e->round_unlimited = FALSE;
    }
    return TRUE;
}

void qs_e2e_mark_app_limited(QsE2e *e2e, uint64_t sent_bytes)
{
    qs_idle_marks_add(&e2e->idle, sent_bytes);
}

uint64_t qs_e2e_in_flight(const QsE2e *e2e, const QsBwe *bwe, int64_t now_us,
                          uint64_t sent_bytes)
{
    uint64_t unread, drained;
    int64_t since;

    if (!e2e->have_ack) {
        /* Until the client has answered once, nothing is known to be read:
         * the pacer's first target is all that may go out (like TCP's
         * initial window), or a fast hop to a proxy lets megabytes into
         * the proxy's buffers in the first round trip. A client silent for
         * QS_E2E_SILENT_US answers no PING at all (none we know of): then
         * TCP_INFO alone paces it. */
        return e2e->probed && now_us - e2e->first_probe_us < QS_E2E_SILENT_US ? sent_bytes : 0;
    }
    if (sent_bytes <= e2e->acked) {
        return 0;
    }
    unread = sent_bytes - e2e->acked;
    /* Between PONGs the client goes on reading at about the path's rate, as
     * TCP's ACKs would show; a PONG later than two probe spacings means
     * it stopped, and then nothing more is assumed read. Only the client's
     * own rate says how fast: the socket's may be a proxy's. */
    since = MIN(now_us - e2e->acked_us, 2 * spacing_us(bwe));
    drained = since > 0 ? qs_bwe_e2e_bandwidth(bwe) * (uint64_t)since / G_USEC_PER_SEC : 0;
    return unread > drained ? unread - drained : 0;
}

uint64_t qs_e2e_acked(const QsE2e *e2e)
{
    return e2e->acked;
}

uint64_t qs_e2e_pongs(const QsE2e *e2e)
{
    return e2e->pongs;
}
