/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Acceptance: scheduler + pacer + estimator on simulated slow and fast links. */
#include <string.h>

#include "flow-sim.h"
#include "flow/qs-bwe.h"
#include "flow/qs-pacer.h"
#include "flow/qs-scheduler.h"

/*
 * The benchmark's rig in miniature: a 1280x800 screen, a 640x480 area at
 * (624, 160) redrawn with noise at 30 Hz (1-3 encoded bytes per pixel), and
 * key presses that each repaint a 96x96 key box. The channel loop below is
 * what helper/channels will do: snapshot the socket, ask the pacer, pick,
 * "encode", write, until the scheduler is idle or blocked, then sleep until
 * the next damage or the pacer's wake time.
 */

#define SCREEN_W 1280
#define SCREEN_H 800
#define FRAME_US 33333
#define DURATION_US (8 * G_USEC_PER_SEC)
#define KEYS 8
#define NEWEST_AT_US (1500 * 1000)
#define NEWEST_TIMES 10
#define NEWEST_GAP_US 2000
#define SLACK_US 5000
#define WARMUP_US (1 * G_USEC_PER_SEC)

static const QsRect busy = { 624, 160, 640, 480 };
static const QsRect keybox = { 203, 301, 96, 96 };
static const QsRect newest = { 32, 640, 256, 128 };   /* 128 blocks: bulk */

typedef struct {
    double key_delay_us[KEYS];
    double key_bound_us[KEYS];
    gboolean key_first[KEYS];
    QsLane key_lane[KEYS];
    uint64_t max_queued;            /* whole run, startup included */
    uint64_t max_queued_steady;     /* after WARMUP_US */
    uint64_t max_band_target;       /* the pacer's band after WARMUP_US */
    uint64_t max_band;
    uint64_t max_fast;
    unsigned newest_max_sends;
    unsigned newest_min_sends;
    unsigned newest_after_min;      /* sends at/after the last damage */
    unsigned newest_after_max;
    unsigned newest_mid_picks;      /* picks of it between damages */
    unsigned fast_between_bulk;
    uint64_t acked;
    uint64_t acked_warm;            /* acked by WARMUP_US */
    uint64_t items;
    uint64_t final_bw;
    uint32_t final_min_rtt;
} Result;

static uint32_t synth_encode(GRand *rng, const QsRect *r)
{
    return flow_sim_image_bytes(rng, r, &busy, &keybox);
}

static void run_link(const FlowSimLinkCase *lc, guint32 seed, Result *res)
{
    g_autoptr(FlowSimLink) link = flow_sim_link_new(lc->bits_per_sec, lc->rtt_us);
    g_autoptr(QsBwe) bwe = qs_bwe_new();
    g_autoptr(QsPacer) pacer = qs_pacer_new();
    g_autoptr(QsScheduler) sched = qs_scheduler_new();
    g_autoptr(FlowSimHeat) heat = flow_sim_heat_new(SCREEN_W, SCREEN_H, 0);
    g_autoptr(GRand) rng = g_rand_new_with_seed(seed);
    double rate = flow_sim_link_bytes_per_sec(link);
    uint64_t bdp = flow_sim_link_bdp(link);
    int64_t key_at[KEYS];
    int64_t key_pending = -1;         /* index of a press not yet on the wire */
    unsigned newest_sends[8][16] = { { 0 } };
    unsigned newest_after[8][16] = { { 0 } };
    unsigned next_key = 0, newest_done = 0;
    int64_t now = 0, next_frame = 0, wake = 0;
    QsLane last_lane = QS_LANE_BULK;
    gboolean bulk_seen = FALSE;

    memset(res, 0, sizeof(*res));
    for (unsigned k = 0; k < KEYS; k++) {
        key_at[k] = 2 * G_USEC_PER_SEC + k * 700000 +
                    g_rand_int_range(rng, 0, 500000);
    }
    g_assert_true(qs_scheduler_reset(sched, 1, SCREEN_W, SCREEN_H, now));

    while (now < DURATION_US) {
        int64_t next;

        /* Damage due now. */
        if (now >= next_frame) {
            qs_scheduler_add_rect(sched, &busy, now);
            flow_sim_heat_change(heat, &busy, now);
            next_frame += FRAME_US;
        }
        if (next_key < KEYS && now >= key_at[next_key]) {
            qs_scheduler_add_rect(sched, &keybox, now);
            flow_sim_heat_change(heat, &keybox, now);
            key_at[next_key] = now;
            res->key_first[next_key] = TRUE;
            key_pending = next_key++;
        }
        if (newest_done < NEWEST_TIMES &&
            now >= NEWEST_AT_US + newest_done * NEWEST_GAP_US) {
            qs_scheduler_add_rect(sched, &newest, now);
            flow_sim_heat_change(heat, &newest, now);
            newest_done++;
        }

        if (!res->acked_warm && now >= WARMUP_US) {
            res->acked_warm = flow_sim_link_acked(link, now);
        }

        /* The channel's send loop. */
        flow_sim_heat_feed(heat, sched, now);
        wake = 0;
        for (;;) {
            QsLinkFacts facts;
            QsPacerBudget budget;
            QsFlowItem item;
            QsPick pick;
            uint32_t bytes;
            double depart;
            uint64_t queued;

            flow_sim_link_facts(link, now, &facts);
            qs_bwe_on_facts(bwe, now, &facts);
            queued = (uint64_t)facts.unsent_bytes + facts.in_flight_bytes;
            qs_pacer_budget(pacer, bwe, now, queued, &budget);
            pick = qs_scheduler_next(sched, now, &budget, &item);
            if (pick == QS_PICK_IDLE) {
                qs_bwe_mark_app_limited(bwe, facts.bytes_written);
                break;
            }
            if (pick == QS_PICK_BLOCKED) {
                wake = budget.wake_us;
                if (budget.fast_wake_us && budget.fast_wake_us < wake) {
                    wake = budget.fast_wake_us;
                }
                break;
            }
            bytes = synth_encode(rng, &item.rect);
            depart = flow_sim_link_write(link, now, bytes);
            qs_scheduler_feedback(sched, &item, bytes);
            res->items++;
            if (item.lane == QS_LANE_BULK) {
                res->max_band = MAX(res->max_band, bytes);
                bulk_seen = TRUE;
            } else {
                res->max_fast = MAX(res->max_fast, bytes);
                if (bulk_seen && last_lane == QS_LANE_BULK) {
                    res->fast_between_bulk++;
                }
            }
            last_lane = item.lane;
            res->max_queued = MAX(res->max_queued,
                                  flow_sim_link_queued(link, now));
            if (now >= WARMUP_US) {
                res->max_queued_steady = MAX(res->max_queued_steady,
                                             flow_sim_link_queued(link, now));
                res->max_band_target = MAX(res->max_band_target,
                                           budget.band_bytes);
            }

            if (key_pending >= 0 && !flow_sim_overlap(&item.rect, &keybox)) {
                /* Something was decided between the press and its item. */
                res->key_first[key_pending] = FALSE;
            }
            if (key_pending >= 0 && flow_sim_overlap(&item.rect, &keybox)) {
                unsigned k = (unsigned)key_pending;

                res->key_delay_us[k] = depart - (double)key_at[k];
                res->key_bound_us[k] = lc->rtt_us / 2.0 + bytes / rate * 1e6 +
                                       SLACK_US;
                res->key_lane[k] = item.lane;
                key_pending = -1;
            }
            if (now >= NEWEST_AT_US && flow_sim_overlap(&item.rect, &newest)) {
                gboolean mid = newest_done < NEWEST_TIMES;

                res->newest_mid_picks += mid;
                for (unsigned r = 0; r < 8; r++) {
                    for (unsigned c = 0; c < 16; c++) {
                        QsRect b = { newest.x + 16 * (int)c,
                                     newest.y + 16 * (int)r, 16, 16 };
                        unsigned hit = flow_sim_overlap(&item.rect, &b) > 0;

                        newest_sends[r][c] += hit;
                        newest_after[r][c] += hit && !mid;
                    }
                }
            }
        }
        next = next_frame;
        if (next_key < KEYS) {
            next = MIN(next, key_at[next_key]);
        }
        if (newest_done < NEWEST_TIMES) {
            next = MIN(next, NEWEST_AT_US + newest_done * NEWEST_GAP_US);
        }
        if (wake) {
            next = MIN(next, wake);
        }
        now = MAX(next, now + 1);
    }

    res->newest_min_sends = res->newest_after_min = UINT_MAX;
    for (unsigned r = 0; r < 8; r++) {
        for (unsigned c = 0; c < 16; c++) {
            res->newest_max_sends = MAX(res->newest_max_sends, newest_sends[r][c]);
            res->newest_min_sends = MIN(res->newest_min_sends, newest_sends[r][c]);
            res->newest_after_max = MAX(res->newest_after_max, newest_after[r][c]);
            res->newest_after_min = MIN(res->newest_after_min, newest_after[r][c]);
        }
    }
    res->acked = flow_sim_link_acked(link, now);
    res->final_bw = qs_bwe_bandwidth(bwe);
    res->final_min_rtt = qs_bwe_min_rtt_us(bwe);
    (void)bdp;
}

#define SEEDS 3

/* One link's row of the report: the worst or mean over its seeds. */
typedef struct {
    double key_p50_ms, key_max_ms, key_bound_min_ms;
    double queued_bdp, queued_steady_bdp, use_pct;
    uint64_t band_target;
} Summary;

static const FlowSimLinkCase links[] = {
    { "2mbit-150ms", 2e6, 150000 },
    { "5mbit-80ms", 5e6, 80000 },
    { "10mbit-80ms", 10e6, 80000 },
    { "50mbit-20ms", 50e6, 20000 },
    { "lan-1gbit-0.2ms", 1e9, 200 },
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/*
 * The row's figures that the per-seed checks (each key, the socket's
 * queue) do not cover, against what the pacer should give here. The busy
 * area alone asks for 30 x 640x480 px at 2 B/px on average (synth_encode),
 * about 147 Mbit/s: more than every link but the LAN, so there the
 * scheduler always has work and only the pacer can leave the link idle; on
 * the LAN every frame fits and the link carries what the screen makes.
 */
static void check_row(const FlowSimLinkCase *lc, const Summary *sum, double bdp, double rate)
{
    double demand = (200.0 + (double)busy.width * busy.height * 2.0) * G_USEC_PER_SEC /
                    FRAME_US;
    double expect_pct = 100.0 * MIN(1.0, demand / rate);
    gboolean bottleneck = demand > rate;

    g_test_message("%-16s %8s %8s %8s %10s %9s %9s %7s %9s", "link", "key p50",
                   "key max", "bound", "sock max", "after 1s", "band", "use",
                   "keys");
    g_test_message("%-16s %6.1fms %6.1fms %6.1fms %7.2fBDP %6.2fBDP %7" G_GUINT64_FORMAT
                   "B %5.0f%% %9d", lc->name, sum->key_p50_ms, sum->key_max_ms,
                   sum->key_bound_min_ms, sum->queued_bdp, sum->queued_steady_bdp,
                   sum->band_target, sum->use_pct, SEEDS * KEYS);

    /* Half the presses go out within the tightest bound any press had (each
     * press is checked against its own, looser one per seed). Measured:
     * p50 at 0-30 % of that bound. */
    g_assert_cmpfloat(sum->key_p50_ms, <=, sum->key_bound_min_ms);
    /* Link use after the first second (the random seeds are fixed, so these do
     * not vary from run to run): 95-96 % on every bottleneck link, the rest
     * being bytes not yet acknowledged at the end; a pacer that lets the
     * link wait falls below 92 % (without the cruising half band of
     * qs-pacer.c: 87-89 %). On the LAN 16 % against 14.7 % for the frames'
     * pixels (plus item headers, key boxes): fewer frames sent would fall
     * below 0.92 of it, frames sent twice would pass 1.25 of it. */
    g_assert_cmpfloat(sum->use_pct, >=, 0.92 * expect_pct);
    g_assert_cmpfloat(sum->use_pct, <=, 1.25 * expect_pct);
    /* Bands are a quarter of the estimated BDP (qs-pacer.c), at least
     * QS_PACER_BAND_MIN. The estimate's min RTT includes a packet's
     * serialisation, so 1-4 % above a quarter of the true BDP here; 10 %
     * allows for the probe phase. On the LAN the estimate only sees what the
     * screen sends (~300 of 1000 Mbit/s), so the band is the floor. */
    g_assert_cmpuint(sum->band_target, >=,
                     bottleneck ? (uint64_t)(bdp / 4) : QS_PACER_BAND_MIN);
    g_assert_cmpuint(sum->band_target, <=,
                     (uint64_t)(1.1 * MAX(bdp / 4, QS_PACER_BAND_MIN)));
}

static void check_link(gconstpointer data)
{
    const FlowSimLinkCase *lc = data;
    Summary row = { 0 }, *sum = &row;
    FlowSimLink *probe = flow_sim_link_new(lc->bits_per_sec, lc->rtt_us);
    double bdp = (double)flow_sim_link_bdp(probe);
    double rate = flow_sim_link_bytes_per_sec(probe);
    double delays[SEEDS * KEYS];
    unsigned n = 0;

    flow_sim_link_free(probe);
    sum->key_bound_min_ms = G_MAXDOUBLE;

    for (guint32 seed = 1; seed <= SEEDS; seed++) {
        Result res;

        run_link(lc, 20261130 + seed, &res);
        for (unsigned k = 0; k < KEYS; k++) {
            g_test_message("%s seed %u key %u: on the wire after %.2f ms "
                           "(bound %.2f ms, %s%s)", lc->name, seed, k,
                           res.key_delay_us[k] / 1000.0,
                           res.key_bound_us[k] / 1000.0,
                           res.key_lane[k] == QS_LANE_FAST ? "fast lane" : "bulk",
                           res.key_first[k] ? ", next item" : ", NOT next item");
            g_assert_cmpfloat(res.key_bound_us[k], >, 0);
            g_assert_cmpint(res.key_lane[k], ==, QS_LANE_FAST);
            g_assert_true(res.key_first[k]);
            g_assert_cmpfloat(res.key_delay_us[k], <=, res.key_bound_us[k]);
            delays[n++] = res.key_delay_us[k] / 1000.0;
            sum->key_bound_min_ms = MIN(sum->key_bound_min_ms,
                                        res.key_bound_us[k] / 1000.0);
        }
        g_test_message("%s seed %u: socket max %" G_GUINT64_FORMAT " B = %.2f BDP "
                       "overall, %" G_GUINT64_FORMAT " B = %.2f BDP after %d s "
                       "(BDP %.0f B, band target %" G_GUINT64_FORMAT " B, largest "
                       "band %" G_GUINT64_FORMAT " B, largest fast item %"
                       G_GUINT64_FORMAT " B)", lc->name, seed, res.max_queued,
                       res.max_queued / bdp, res.max_queued_steady,
                       res.max_queued_steady / bdp, (int)(WARMUP_US / G_USEC_PER_SEC),
                       bdp, res.max_band_target, res.max_band, res.max_fast);
        g_test_message("%s seed %u: link use %.0f %% (%.0f %% after %d s); "
                       "estimate %.2f Mbit/s, min RTT %.2f ms; %" G_GUINT64_FORMAT
                       " items, %u fast items between bands; region damaged %d "
                       "times: blocks sent %u-%u times (%u-%u after the last "
                       "damage, %u picks mid-burst)", lc->name, seed,
                       100.0 * res.acked / (rate * DURATION_US / 1e6),
                       100.0 * (res.acked - res.acked_warm) /
                           (rate * (DURATION_US - WARMUP_US) / 1e6),
                       (int)(WARMUP_US / G_USEC_PER_SEC), res.final_bw * 8 / 1e6,
                       res.final_min_rtt / 1000.0, res.items, res.fast_between_bulk,
                       NEWEST_TIMES, res.newest_min_sends, res.newest_max_sends,
                       res.newest_after_min, res.newest_after_max,
                       res.newest_mid_picks);

        /* ~1.5 BDP plus one band, from start to end. */
        g_assert_cmpfloat((double)res.max_queued, <=,
                          1.5 * bdp + MAX(res.max_band, res.max_fast));
        /* Once the estimate has settled, against the band the pacer asked for. */
        g_assert_cmpfloat((double)res.max_queued_steady, <=,
                          1.5 * bdp + res.max_band_target);
        /* Ten damages, one send of the final state; an earlier send only if
         * the link had room mid-burst (that send carried newer pixels). */
        g_assert_cmpuint(res.newest_after_min, ==, 1);
        g_assert_cmpuint(res.newest_after_max, ==, 1);
        g_assert_cmpuint(res.newest_max_sends, <=, 1 + res.newest_mid_picks);
        if (res.acked > 0.5 * rate * DURATION_US / 1e6) {
            /* A busy link: the burst did not turn into ten sends (a block
             * re-damaged within QS_SCHED_RESEND_MS of its send waits
             * behind older work). */
            g_assert_cmpuint(res.newest_max_sends, <=, 3);
        }
        /* Fast items slipped between bands. */
        g_assert_cmpuint(res.fast_between_bulk, >=, 1);

        sum->queued_bdp = MAX(sum->queued_bdp, res.max_queued / bdp);
        sum->queued_steady_bdp = MAX(sum->queued_steady_bdp,
                                     res.max_queued_steady / bdp);
        sum->use_pct += 100.0 * (res.acked - res.acked_warm) /
                        (rate * (DURATION_US - WARMUP_US) / 1e6) / SEEDS;
        sum->band_target = MAX(sum->band_target, res.max_band_target);
    }
    qsort(delays, n, sizeof(delays[0]), cmp_double);
    sum->key_p50_ms = delays[n / 2];
    sum->key_max_ms = delays[n - 1];
    check_row(lc, sum, bdp, rate);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    for (unsigned i = 0; i < G_N_ELEMENTS(links); i++) {
        g_autofree char *path = g_strdup_printf("/flow/link/%s", links[i].name);

        g_test_add_data_func(path, &links[i], check_link);
    }
    return g_test_run();
}
