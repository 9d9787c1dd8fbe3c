/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the byte pacer: budget arithmetic, wake times, gain cycle. */
#include "flow-sim.h"
#include "flow/qs-pacer.h"

/* An estimator that believes `bytes_per_sec` and `rtt_us`. */
static QsBwe *bwe_with(uint64_t bytes_per_sec, uint32_t rtt_us)
{
    QsBwe *bwe = qs_bwe_new();

    qs_bwe_on_rtt_sample(bwe, 0, rtt_us);
    qs_bwe_on_delivery(bwe, 0, bytes_per_sec, G_USEC_PER_SEC, FALSE);
    g_assert_cmpuint(qs_bwe_bandwidth(bwe), ==, bytes_per_sec);
    return bwe;
}

/* Drives the estimator to "pipe full" at 1.25 MB/s and 80 ms. */
static QsBwe *bwe_full(int64_t *now)
{
    QsBwe *bwe = qs_bwe_new();

    for (int k = 0; k < 30; k++) {
        QsLinkFacts f = {
            .bytes_written = (uint64_t)(k + 2) * 100000,
            .bytes_acked = (uint64_t)k * 100000,
            .in_flight_bytes = 200000,
            .rtt_us = 80000,
            .min_rtt_us = 80000,
        };

        *now = (int64_t)k * 80000;
        qs_bwe_on_facts(bwe, *now, &f);
    }
    g_assert_true(qs_bwe_pipe_full(bwe));
    g_assert_cmpuint(qs_bwe_bandwidth(bwe), ==, 1250000);
    return bwe;
}

static void test_budget_startup(void)
{
    g_autoptr(QsBwe) bwe = bwe_with(1250000, 80000);   /* BDP 100000 */
    g_autoptr(QsPacer) pacer = qs_pacer_new();
    QsPacerBudget b;

    qs_pacer_budget(pacer, bwe, 0, 0, &b);
    g_assert_cmpuint(qs_pacer_gain_pct(pacer), ==, 140);
    g_assert_cmpuint(b.band_bytes, ==, 25000);
    g_assert_cmpuint(b.target_bytes, ==, 140000);
    g_assert_cmpint(b.bulk_bytes, ==, 140000);
    g_assert_cmpint(b.fast_bytes, ==, 140000);
    g_assert_cmpint(b.wake_us, ==, 0);
    g_assert_cmpint(b.fast_wake_us, ==, 0);
    g_assert_true(qs_pacer_bulk_open(&b));

    /* 10000 bytes of room: less than half a band, bulk waits; fast goes. */
    qs_pacer_budget(pacer, bwe, 1000000, 130000, &b);
    g_assert_cmpint(b.bulk_bytes, ==, 10000);
    g_assert_false(qs_pacer_bulk_open(&b));
    g_assert_cmpint(b.wake_us, ==, 1000000 + 2000);     /* 2500 B at 1.25 MB/s */
    g_assert_cmpint(b.fast_bytes, >, 0);
    g_assert_cmpint(b.fast_wake_us, ==, 0);

    /* Over target: both wait, fast less long. */
    qs_pacer_budget(pacer, bwe, 1000000, 150000, &b);
    g_assert_cmpint(b.bulk_bytes, ==, -10000);
    g_assert_cmpint(b.wake_us, ==, 1000000 + 18000);    /* 22500 B */
    g_assert_cmpint(b.fast_wake_us, ==, 1000000 + 8000);  /* 10001 B */
}

static void test_wake_clamp(void)
{
    g_autoptr(QsBwe) bwe = bwe_with(125000000, 200);    /* 1 Gbit/s, 0.2 ms */
    g_autoptr(QsBwe) slow = bwe_with(1000, 100000);
    g_autoptr(QsPacer) pacer = qs_pacer_new();
    QsPacerBudget b;

    qs_pacer_budget(pacer, bwe, 5000, 0, &b);
    qs_pacer_budget(pacer, bwe, 5000, b.target_bytes, &b);  /* exactly full */
    g_assert_false(qs_pacer_bulk_open(&b));
    g_assert_cmpint(b.wake_us, ==, 5000 + QS_PACER_WAKE_MIN_US);
    qs_pacer_budget(pacer, slow, 5000, 10000000, &b);
    g_assert_cmpint(b.wake_us, ==, 5000 + QS_PACER_WAKE_MAX_US);
    g_assert_cmpint(b.fast_wake_us, ==, 5000 + QS_PACER_WAKE_MAX_US);
}

static void test_band_clamp(void)
{
    g_autoptr(QsBwe) tiny = bwe_with(125000, 1000);         /* BDP 125 B */
    g_autoptr(QsBwe) huge = bwe_with(125000000, 100000);    /* BDP 12.5 MB */
    g_autoptr(QsPacer) pacer = qs_pacer_new();
    QsPacerBudget b;

    g_assert_cmpuint(qs_pacer_band_bytes(tiny), ==, QS_PACER_BAND_MIN);
    g_assert_cmpuint(qs_pacer_band_bytes(huge), ==, QS_PACER_BAND_MAX);
    g_assert_cmpuint(qs_pacer_notsent_lowat(huge), ==, QS_PACER_BAND_MAX);
    /* Two bands at least, however small the BDP. */
    qs_pacer_budget(pacer, tiny, 0, 0, &b);
    g_assert_cmpuint(b.target_bytes, ==, 2 * QS_PACER_BAND_MIN);
}

static void test_gain_cycle(void)
{
    int64_t t0;
    g_autoptr(QsBwe) bwe = bwe_full(&t0);
    g_autoptr(QsPacer) pacer = qs_pacer_new();
    const unsigned expect[9] = { 75, 100, 100, 100, 100, 100, 100, 125, 75 };
    QsPacerBudget b;

    g_assert_cmpuint(qs_bwe_min_rtt_us(bwe), ==, 80000);
    for (unsigned i = 0; i < G_N_ELEMENTS(expect); i++) {
        qs_pacer_budget(pacer, bwe, t0 + (int64_t)i * 80000 + 10, 0, &b);
        g_assert_cmpuint(qs_pacer_gain_pct(pacer), ==, expect[i]);
        if (expect[i] == 100) {
            /* Cruise keeps half a band above one BDP. */
            g_assert_cmpuint(b.target_bytes, ==, 100000 + 12500);
        } else {
            g_assert_cmpuint(b.target_bytes, ==, 100000 * expect[i] / 100);
        }
    }
}

/* Pacer + estimator + a saturated sender on a 10 Mbit/80 ms link, from
 * the 1 Mbit/s initial guess: converges, and the socket stays bounded. */
static void test_startup_on_link(void)
{
    g_autoptr(FlowSimLink) link = flow_sim_link_new(10e6, 80000);
    g_autoptr(QsBwe) bwe = qs_bwe_new();
    g_autoptr(QsPacer) pacer = qs_pacer_new();
    uint64_t bdp = flow_sim_link_bdp(link), max_q = 0, max_band = 0;
    uint64_t acked_at_conv = 0;
    int64_t now = 0, converged = -1, bw_at = -1;

    while (now < 4 * G_USEC_PER_SEC) {
        QsLinkFacts f;
        QsPacerBudget b;

        flow_sim_link_facts(link, now, &f);
        qs_bwe_on_facts(bwe, now, &f);
        qs_pacer_budget(pacer, bwe, now, f.unsent_bytes + (uint64_t)f.in_flight_bytes,
                        &b);
        if (qs_pacer_bulk_open(&b)) {
            flow_sim_link_write(link, now, b.band_bytes);
            max_band = MAX(max_band, b.band_bytes);
            max_q = MAX(max_q, flow_sim_link_queued(link, now));
            continue;
        }
        if (bw_at < 0 && qs_bwe_bandwidth(bwe) >= 0.95 * 1.25e6) {
            bw_at = now;
        }
        if (converged < 0 && qs_bwe_pipe_full(bwe) &&
            qs_bwe_bandwidth(bwe) >= 0.95 * 1.25e6) {
            converged = now;
            acked_at_conv = f.bytes_acked;
        }
        now = b.wake_us;
    }
    g_test_message("10 Mbit/80 ms from 1 Mbit/s: estimate within 5 %% at %.0f ms "
                   "(%.1f RTTs), startup over at %.0f ms (%.1f RTTs), "
                   "socket max %.2f BDP, use after that %.0f %%",
                   bw_at / 1000.0, bw_at / 80000.0,
                   converged / 1000.0, converged / 80000.0, (double)max_q / bdp,
                   100.0 * (flow_sim_link_acked(link, now) - acked_at_conv) /
                       (1.25 * (double)(now - converged)));
    g_assert_cmpint(bw_at, >, 0);
    g_assert_cmpint(bw_at, <=, 14 * 80000);
    g_assert_cmpint(converged, >, 0);
    g_assert_cmpint(converged, <=, 20 * 80000);
    g_assert_cmpfloat((double)max_q, <=, 1.5 * bdp + max_band);
    g_assert_cmpfloat(flow_sim_link_acked(link, now) - acked_at_conv, >=,
                      0.93 * 1.25 * (double)(now - converged));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/flow/pacer/budget-startup", test_budget_startup);
    g_test_add_func("/flow/pacer/wake-clamp", test_wake_clamp);
    g_test_add_func("/flow/pacer/band-clamp", test_band_clamp);
    g_test_add_func("/flow/pacer/gain-cycle", test_gain_cycle);
    g_test_add_func("/flow/pacer/startup-on-link", test_startup_on_link);
    return g_test_run();
}
