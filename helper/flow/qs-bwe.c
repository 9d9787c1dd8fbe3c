/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Estimates one client's round-trip time and bottleneck bandwidth. */
#include "flow/qs-bwe.h"
#include "flow/qs-idle-marks.h"

/*
 * Why delivery rate and not "bytes sent per second": what we write only says
 * what the socket accepted; what was acknowledged over a round trip says what
 * the path carried. A sample spans at least one min RTT (shorter spans see ACK
 * bursts, not the bottleneck). The filter is a ring of per-round maxima that
 * only advances on rounds that produced a sample, so an idle client keeps its
 * estimate however long it idles (an earlier prototype lost its streams because
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

/* A windowed maximum: one slot per round, maxima older than a time window
 * expire when a full-speed sample arrives. */
typedef struct {
    uint64_t slot[QS_BWE_BW_ROUNDS];
    int64_t slot_us[QS_BWE_BW_ROUNDS];   /* last update of each slot */
    gboolean slot_limited[QS_BWE_BW_ROUNDS]; /* its maximum was application-limited */
    unsigned idx;
    gboolean used;
} RateFilter;

/* Round trips from one source: windowed minimum and smoothed. */
typedef struct {
    gboolean have;
    uint32_t min_us;
    int64_t min_stamp;
    uint32_t srtt_us;
} Rtt;

struct QsBwe {
    Rtt local;                        /* the kernel's (TCP_INFO) */
    Rtt e2e;                          /* the client's (PING to PONG) */

    RateFilter local_bw;              /* TCP_INFO and socket ACKs, per round */
    RateFilter e2e_bw;                /* the client's PONGs, per min RTT */
    int64_t e2e_slot_start_us;
    uint64_t bw;
    uint64_t pinned;                  /* qs_bwe_pin_bandwidth(); 0: none */

    uint64_t rounds;
    gboolean round_started;
    uint64_t round_end_at;
    uint64_t round_start_acked;
    gboolean round_unlimited;

    uint64_t full_bw;
    unsigned full_cnt;
    gboolean pipe_full;

    QsIdleMarks idle;                 /* in bytes written */

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

    bwe->local.min_us = QS_BWE_INITIAL_RTT_US;
    bwe->local.srtt_us = QS_BWE_INITIAL_RTT_US;
    bwe->e2e = bwe->local;
    bwe->bw = QS_BWE_INITIAL_BW;
    return bwe;
}

void qs_bwe_free(QsBwe *bwe)
{
    g_free(bwe);
}

static uint64_t filter_max(const RateFilter *f)
{
    uint64_t best = 0;

    for (unsigned i = 0; i < QS_BWE_BW_ROUNDS; i++) {
        best = MAX(best, f->slot[i]);
    }
    return best;
}

static void filter_next(RateFilter *f)
{
    f->idx = (f->idx + 1) % QS_BWE_BW_ROUNDS;
    f->slot[f->idx] = 0;
    f->slot_us[f->idx] = 0;
    f->slot_limited[f->idx] = FALSE;
    f->used = FALSE;
}

/* The client's own word outranks the socket's: behind a proxy TCP_INFO
 * measures the hop to the proxy, which can be a thousand times faster and
 * a thousand times closer. Rate and RTT of one BDP come from the same
 * source: the proxy's rate times the client's RTT would be megabytes. */
static void recompute_bw(QsBwe *bwe)
{
    uint64_t e2e = filter_max(&bwe->e2e_bw);
    uint64_t local = filter_max(&bwe->local_bw);

    /* Before the first accepted sample the initial guess stands. */
    bwe->bw = bwe->pinned ? bwe->pinned : e2e ? e2e : local ? local : QS_BWE_INITIAL_BW;
}

void qs_bwe_pin_bandwidth(QsBwe *bwe, uint64_t bytes_per_s)
{
    bwe->pinned = bytes_per_s;
    recompute_bw(bwe);
}

static void filter_add(QsBwe *bwe, RateFilter *f, uint32_t min_rtt_us, int64_t now_us,
                       uint64_t rate, gboolean app_limited, uint64_t known)
{
    if (rate == 0) {
        return;
    }
    /* A sender that had nothing to send measured itself, not the link. */
    if (app_limited && rate <= known) {
        return;
    }
    if (!app_limited) {
        /* A full-speed sample is news about the path: maxima older than
         * the time window go, so a path that slowed down is noticed even
         * when a standing queue makes its rounds long. Idle time never
         * expires anything (no such sample arrives). */
        int64_t window = MAX((int64_t)QS_BWE_BW_ROUNDS * min_rtt_us,
                             QS_BWE_BW_MIN_WINDOW_US);

        for (unsigned i = 0; i < QS_BWE_BW_ROUNDS; i++) {
            if (i != f->idx && now_us - f->slot_us[i] > window) {
                f->slot[i] = 0;
            }
        }
    }
    if (rate > f->slot[f->idx]) {
        f->slot[f->idx] = rate;
        f->slot_limited[f->idx] = app_limited;
    } else if (rate == f->slot[f->idx] && !app_limited) {
        f->slot_limited[f->idx] = FALSE;
    }
    f->slot_us[f->idx] = now_us;
    f->used = TRUE;
    recompute_bw(bwe);
}

static void add_bw_sample(QsBwe *bwe, int64_t now_us, uint64_t rate,
                          gboolean app_limited)
{
    filter_add(bwe, &bwe->local_bw, bwe->local.min_us, now_us, rate, app_limited, bwe->bw);
    if (rate && !app_limited) {
        bwe->round_unlimited = TRUE;
    }
}

/* Startup ends when the bandwidth stopped growing by 25 % over three
 * rounds that were not application-limited. */
static void check_full_pipe(QsBwe *bwe, gboolean unlimited)
{
    if (unlimited && !bwe->pipe_full) {
        if (bwe->bw * FULL_BW_GROWTH_DEN >= bwe->full_bw * FULL_BW_GROWTH_NUM) {
            bwe->full_bw = bwe->bw;
            bwe->full_cnt = 0;
        } else if (++bwe->full_cnt >= FULL_BW_ROUNDS) {
            bwe->pipe_full = TRUE;
        }
    }
}

static void end_round(QsBwe *bwe)
{
    bwe->rounds++;
    /* Once the client's samples rule, its round trips count (behind a
     * proxy the socket's rounds are microseconds and prove nothing). */
    if (!filter_max(&bwe->e2e_bw)) {
        check_full_pipe(bwe, bwe->round_unlimited);
    }
    if (bwe->local_bw.used) {
        filter_next(&bwe->local_bw);
        recompute_bw(bwe);
    }
    bwe->round_unlimited = FALSE;
}

void qs_bwe_on_e2e_round(QsBwe *bwe, gboolean unlimited)
{
    if (filter_max(&bwe->e2e_bw)) {
        check_full_pipe(bwe, unlimited);
    }
}

static void rtt_sample(Rtt *r, int64_t now_us, uint32_t rtt_us)
{
    if (rtt_us == 0) {
        return;
    }
    if (!r->have) {
        r->srtt_us = rtt_us;
        r->min_us = rtt_us;
        r->min_stamp = now_us;
        r->have = TRUE;
        return;
    }
    r->srtt_us = (uint32_t)(((uint64_t)r->srtt_us * 7 + rtt_us) / 8);
    if (rtt_us <= r->min_us || now_us - r->min_stamp > QS_BWE_MIN_RTT_WINDOW_US) {
        r->min_us = rtt_us;
        r->min_stamp = now_us;
    }
}

void qs_bwe_on_rtt_sample(QsBwe *bwe, int64_t now_us, uint32_t rtt_us)
{
    rtt_sample(&bwe->e2e, now_us, rtt_us);
}

static void push_snap(QsBwe *bwe, int64_t now_us, uint64_t acked)
{
    int64_t spacing = MAX((int64_t)bwe->local.min_us / 4, MIN_SAMPLE_US / 2);

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
    int64_t span = MAX((int64_t)bwe->local.min_us, MIN_SAMPLE_US);

    for (unsigned i = 0; i < bwe->snap_len; i++) {
        const Snap *s = &bwe->snap[(bwe->snap_head + SNAPS - i) % SNAPS];

        if (now_us - s->t < span) {
            continue;
        }
        if (acked > s->acked) {
            uint64_t rate = (acked - s->acked) * G_USEC_PER_SEC /
                            (uint64_t)(now_us - s->t);
            gboolean limited = qs_idle_marks_span_limited(&bwe->idle, s->acked, acked);

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
        qs_idle_marks_clear(&bwe->idle);
    }
    bwe->have_facts = TRUE;
    bwe->last_written = written;
    bwe->last_acked = acked;

    if (facts->min_rtt_us &&
        (!bwe->local.have || facts->min_rtt_us < bwe->local.min_us ||
         now_us - bwe->local.min_stamp > QS_BWE_MIN_RTT_WINDOW_US)) {
        /* The kernel keeps its own (longer) window; trust it as fresh. */
        bwe->local.min_us = facts->min_rtt_us;
        bwe->local.min_stamp = now_us;
        if (!bwe->local.have) {
            bwe->local.srtt_us = facts->min_rtt_us;
            bwe->local.have = TRUE;
        }
    }
    rtt_sample(&bwe->local, now_us, facts->rtt_us);

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
    /* One slot per min RTT (at least 50 ms, the shortest span qs-e2e.c
     * samples) of samples, so the window holds QS_BWE_BW_ROUNDS round trips
     * that carried data; idle time, which brings no samples, ages nothing. */
    if (bwe->e2e_bw.used &&
        now_us - bwe->e2e_slot_start_us >= MAX((int64_t)bwe->e2e.min_us, 50000)) {
        filter_next(&bwe->e2e_bw);
    }
    if (!bwe->e2e_bw.used) {
        bwe->e2e_slot_start_us = now_us;
    }
    if (!filter_max(&bwe->e2e_bw)) {
        /* The client's regime begins: the socket's startup proved nothing
         * about the path behind it, so discover it again. */
        bwe->pipe_full = FALSE;
        bwe->full_bw = 0;
        bwe->full_cnt = 0;
    }
    /* An application-limited sample is news only above what the client
     * has shown, not above the socket's rate: behind a relay that is the
     * relay's, so no sample of a sender that ever paused would count, and
     * the relay's rate would stand as the path's. */
    filter_add(bwe, &bwe->e2e_bw, bwe->e2e.min_us, now_us,
               bytes * G_USEC_PER_SEC / (uint64_t)interval_us, app_limited,
               filter_max(&bwe->e2e_bw));
}

void qs_bwe_mark_app_limited(QsBwe *bwe, uint64_t bytes_written)
{
    qs_idle_marks_add(&bwe->idle, bytes_written);
}

uint64_t qs_bwe_bandwidth(const QsBwe *bwe)
{
    return bwe->bw;
}

uint32_t qs_bwe_min_rtt_us(const QsBwe *bwe)
{
    return bwe->e2e.have ? bwe->e2e.min_us : bwe->local.min_us;
}

uint32_t qs_bwe_srtt_us(const QsBwe *bwe)
{
    return bwe->e2e.have ? bwe->e2e.srtt_us : bwe->local.srtt_us;
}

uint64_t qs_bwe_bdp_bytes(const QsBwe *bwe)
{
    uint32_t rtt = filter_max(&bwe->e2e_bw) ? bwe->e2e.min_us : bwe->local.min_us;

    return bwe->bw * rtt / G_USEC_PER_SEC;
}

uint64_t qs_bwe_e2e_bandwidth(const QsBwe *bwe)
{
    return filter_max(&bwe->e2e_bw);
}

gboolean qs_bwe_pipe_full(const QsBwe *bwe)
{
    return bwe->pipe_full;
}

/* The filter's maximum was measured while the sender was held back. */
static gboolean filter_max_unlimited(const RateFilter *f)
{
    uint64_t best = filter_max(f);

    for (unsigned i = 0; best && i < QS_BWE_BW_ROUNDS; i++) {
        if (f->slot[i] == best && !f->slot_limited[i]) {
            return TRUE;
        }
    }
    return FALSE;
}

gboolean qs_bwe_link_known(const QsBwe *bwe)
{
    return bwe->pinned || filter_max_unlimited(filter_max(&bwe->e2e_bw) ? &bwe->e2e_bw
                                                                        : &bwe->local_bw);
}

uint64_t qs_bwe_rounds(const QsBwe *bwe)
{
    return bwe->rounds;
}
