/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Estimates one client's round-trip time and bottleneck bandwidth. */
#include "flow/qs-bwe.h"

/*
 * Why delivery rate and not "bytes sent per second": what we write only says
 * what the socket accepted; what was acknowledged over a round trip says what
 * the path carried. A sample spans at least one min RTT (shorter spans see ACK
 * bursts, not the bottleneck). The filter is a ring of per-round maxima that
 * only advances on rounds that produced a sample, so an idle client keeps its
 * estimate however long it idles (the seeds' helper lost its streams because
 * it learnt the link from what it had been allowed to send).
 */

#define SNAPS 16
#define MIN_SAMPLE_US 100
#define FULL_BW_GROWTH_NUM 5          /* 25 % growth ... */
#define FULL_BW_GROWTH_DEN 4
#define FULL_BW_ROUNDS 3              /* ... missing for 3 rounds: pipe full */

typedef struct {
    int64_t t;
    uint64_t acked;
} Snap;

struct QsBwe {
    gboolean have_rtt;
    uint32_t min_rtt_us;
    int64_t min_rtt_stamp;
    uint32_t srtt_us;

    uint64_t slot[QS_BWE_BW_ROUNDS];
    int64_t slot_us[QS_BWE_BW_ROUNDS];   /* last update of each slot */
    unsigned slot_idx;
    gboolean slot_used;
    uint64_t bw;

    uint64_t rounds;
    gboolean round_started;
    uint64_t round_end_at;
    uint64_t round_start_acked;
    gboolean round_unlimited;

    uint64_t full_bw;
    unsigned full_cnt;
    gboolean pipe_full;

    gboolean app_limited_valid;
    uint64_t app_limited_until;

    gboolean have_facts;
    uint64_t last_written;
    uint64_t last_acked;
    Snap snap[SNAPS];
    unsigned snap_head;               /* index of the newest */
    unsigned snap_len;
};

QsBwe *qs_bwe_new(void)
{
    QsBwe *bwe = g_new0(QsBwe, 1);

    bwe->min_rtt_us = QS_BWE_INITIAL_RTT_US;
    bwe->srtt_us = QS_BWE_INITIAL_RTT_US;
    bwe->bw = QS_BWE_INITIAL_BW;
    return bwe;
}

void qs_bwe_free(QsBwe *bwe)
{
    g_free(bwe);
}

static void recompute_bw(QsBwe *bwe)
{
    uint64_t best = 0;

    for (unsigned i = 0; i < QS_BWE_BW_ROUNDS; i++) {
        best = MAX(best, bwe->slot[i]);
    }
    /* Before the first accepted sample the initial guess stands. */
    bwe->bw = best ? best : QS_BWE_INITIAL_BW;
}

static void add_bw_sample(QsBwe *bwe, int64_t now_us, uint64_t rate,
                          gboolean app_limited)
{
    if (rate == 0) {
        return;
    }
    /* A sender that had nothing to send measured itself, not the link. */
    if (app_limited && rate <= bwe->bw) {
        return;
    }
    if (!app_limited) {
        /* A full-speed sample is news about the path: maxima older than
         * the time window go, so a path that slowed down is noticed even
         * when a standing queue makes its rounds long. Idle time never
         * expires anything (no such sample arrives). */
        int64_t window = MAX((int64_t)QS_BWE_BW_ROUNDS * bwe->min_rtt_us,
                             QS_BWE_BW_MIN_WINDOW_US);

        for (unsigned i = 0; i < QS_BWE_BW_ROUNDS; i++) {
            if (i != bwe->slot_idx && now_us - bwe->slot_us[i] > window) {
                bwe->slot[i] = 0;
            }
        }
    }
    if (rate > bwe->slot[bwe->slot_idx]) {
        bwe->slot[bwe->slot_idx] = rate;
    }
    bwe->slot_us[bwe->slot_idx] = now_us;
    bwe->slot_used = TRUE;
    if (!app_limited) {
        bwe->round_unlimited = TRUE;
    }
    recompute_bw(bwe);
}

static void end_round(QsBwe *bwe)
{
    bwe->rounds++;
    if (bwe->round_unlimited && !bwe->pipe_full) {
        if (bwe->bw * FULL_BW_GROWTH_DEN >= bwe->full_bw * FULL_BW_GROWTH_NUM) {
            bwe->full_bw = bwe->bw;
            bwe->full_cnt = 0;
        } else if (++bwe->full_cnt >= FULL_BW_ROUNDS) {
            bwe->pipe_full = TRUE;
        }
    }
    if (bwe->slot_used) {
        bwe->slot_idx = (bwe->slot_idx + 1) % QS_BWE_BW_ROUNDS;
        bwe->slot[bwe->slot_idx] = 0;
        bwe->slot_us[bwe->slot_idx] = 0;
        bwe->slot_used = FALSE;
        recompute_bw(bwe);
    }
    bwe->round_unlimited = FALSE;
}

void qs_bwe_on_rtt_sample(QsBwe *bwe, int64_t now_us, uint32_t rtt_us)
{
    if (rtt_us == 0) {
        return;
    }
    if (!bwe->have_rtt) {
        bwe->srtt_us = rtt_us;
        bwe->min_rtt_us = rtt_us;
        bwe->min_rtt_stamp = now_us;
        bwe->have_rtt = TRUE;
        return;
    }
    bwe->srtt_us = (uint32_t)(((uint64_t)bwe->srtt_us * 7 + rtt_us) / 8);
    if (rtt_us <= bwe->min_rtt_us ||
        now_us - bwe->min_rtt_stamp > QS_BWE_MIN_RTT_WINDOW_US) {
        bwe->min_rtt_us = rtt_us;
        bwe->min_rtt_stamp = now_us;
    }
}

static void push_snap(QsBwe *bwe, int64_t now_us, uint64_t acked)
{
    int64_t spacing = MAX((int64_t)bwe->min_rtt_us / 4, MIN_SAMPLE_US / 2);

    if (bwe->snap_len > 0 && now_us - bwe->snap[bwe->snap_head].t < spacing) {
        return;
    }
    bwe->snap_head = (bwe->snap_head + 1) % SNAPS;
    bwe->snap[bwe->snap_head] = (Snap){ now_us, acked };
    if (bwe->snap_len < SNAPS) {
        bwe->snap_len++;
    }
}

/* Rate over the shortest recent span of at least one min RTT. */
static void sample_delivery(QsBwe *bwe, int64_t now_us, uint64_t acked)
{
    int64_t span = MAX((int64_t)bwe->min_rtt_us, MIN_SAMPLE_US);

    for (unsigned i = 0; i < bwe->snap_len; i++) {
        const Snap *s = &bwe->snap[(bwe->snap_head + SNAPS - i) % SNAPS];

        if (now_us - s->t < span) {
            continue;
        }
        if (acked > s->acked) {
            uint64_t rate = (acked - s->acked) * G_USEC_PER_SEC /
                            (uint64_t)(now_us - s->t);
            gboolean limited = bwe->app_limited_valid &&
                               s->acked <= bwe->app_limited_until;

            add_bw_sample(bwe, now_us, rate, limited);
        }
        return;
    }
}

void qs_bwe_on_facts(QsBwe *bwe, int64_t now_us, const QsLinkFacts *facts)
{
    uint64_t written = facts->bytes_written;
    uint64_t acked = facts->bytes_acked;

    if (acked == 0) {
        uint64_t queued = (uint64_t)facts->unsent_bytes + facts->in_flight_bytes;
        acked = written > queued ? written - queued : 0;
    }
    if (bwe->have_facts &&
        (written < bwe->last_written || acked < bwe->last_acked)) {
        /* Counters restarted: a new socket. Keep the estimates, drop spans. */
        bwe->snap_len = 0;
        bwe->round_started = FALSE;
        bwe->app_limited_valid = FALSE;
    }
    bwe->have_facts = TRUE;
    bwe->last_written = written;
    bwe->last_acked = acked;

    if (facts->min_rtt_us &&
        (!bwe->have_rtt || facts->min_rtt_us < bwe->min_rtt_us ||
         now_us - bwe->min_rtt_stamp > QS_BWE_MIN_RTT_WINDOW_US)) {
        /* The kernel keeps its own (longer) window; trust it as fresh. */
        bwe->min_rtt_us = facts->min_rtt_us;
        bwe->min_rtt_stamp = now_us;
        if (!bwe->have_rtt) {
            bwe->srtt_us = facts->min_rtt_us;
            bwe->have_rtt = TRUE;
        }
    }
    qs_bwe_on_rtt_sample(bwe, now_us, facts->rtt_us);

    sample_delivery(bwe, now_us, acked);
    push_snap(bwe, now_us, acked);

    if (facts->delivery_rate) {
        add_bw_sample(bwe, now_us, facts->delivery_rate,
                      facts->delivery_rate_app_limited);
    }

    if (!bwe->round_started) {
        bwe->round_started = TRUE;
        bwe->round_end_at = written;
        bwe->round_start_acked = acked;
    } else if (acked >= bwe->round_end_at && acked > bwe->round_start_acked) {
        end_round(bwe);
        bwe->round_end_at = written;
        bwe->round_start_acked = acked;
    }
}

void qs_bwe_on_delivery(QsBwe *bwe, int64_t now_us, uint64_t bytes,
                        int64_t interval_us, gboolean app_limited)
{
    if (interval_us <= 0 || bytes == 0) {
        return;
    }
    add_bw_sample(bwe, now_us, bytes * G_USEC_PER_SEC / (uint64_t)interval_us,
                  app_limited);
}

void qs_bwe_mark_app_limited(QsBwe *bwe, uint64_t bytes_written)
{
    bwe->app_limited_valid = TRUE;
    bwe->app_limited_until = bytes_written;
}

uint64_t qs_bwe_bandwidth(const QsBwe *bwe)
{
    return bwe->bw;
}

uint32_t qs_bwe_min_rtt_us(const QsBwe *bwe)
{
    return bwe->min_rtt_us;
}

uint32_t qs_bwe_srtt_us(const QsBwe *bwe)
{
    return bwe->srtt_us;
}

uint64_t qs_bwe_bdp_bytes(const QsBwe *bwe)
{
    return bwe->bw * bwe->min_rtt_us / G_USEC_PER_SEC;
}

gboolean qs_bwe_pipe_full(const QsBwe *bwe)
{
    return bwe->pipe_full;
}

uint64_t qs_bwe_rounds(const QsBwe *bwe)
{
    return bwe->rounds;
}
