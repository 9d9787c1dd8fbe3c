/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the RTT and bandwidth estimator. */
#include "flow-sim.h"
#include "flow/qs-bwe.h"

#define STEP_US 5000

/* A sender that keeps `fill` bytes queued (or, when `trickle` is non-zero,
 * writes only that much per step and says so), for `dur_us`. */
static int64_t drive(FlowSimLink *link, QsBwe *bwe, int64_t now, int64_t dur_us,
                     uint64_t fill, uint64_t trickle, gboolean mark)
{
    for (int64_t end = now + dur_us; now < end; now += STEP_US) {
        QsLinkFacts f;

        if (trickle) {
            flow_sim_link_write(link, now, trickle);
        } else {
            uint64_t q = flow_sim_link_queued(link, now);

            if (q < fill) {
                flow_sim_link_write(link, now, fill - q);
            }
        }
        flow_sim_link_facts(link, now, &f);
        qs_bwe_on_facts(bwe, now, &f);
        if (trickle && mark) {
            qs_bwe_mark_app_limited(bwe, f.bytes_written);
        }
    }
    return now;
}

static void test_initial(void)
{
    g_autoptr(QsBwe) bwe = qs_bwe_new();

    g_assert_cmpuint(qs_bwe_bandwidth(bwe), ==, QS_BWE_INITIAL_BW);
    g_assert_cmpuint(qs_bwe_min_rtt_us(bwe), ==, QS_BWE_INITIAL_RTT_US);
    g_assert_cmpuint(qs_bwe_bdp_bytes(bwe), ==,
                     (uint64_t)QS_BWE_INITIAL_BW * QS_BWE_INITIAL_RTT_US / 1000000);
    g_assert_false(qs_bwe_pipe_full(bwe));
}

/* A saturated 10 Mbit/s, 80 ms path is learnt within 10 round trips. */
static void test_converges(void)
{
    g_autoptr(FlowSimLink) link = flow_sim_link_new(10e6, 80000);
    g_autoptr(QsBwe) bwe = qs_bwe_new();
    uint64_t bdp = flow_sim_link_bdp(link);
    int64_t now = 0;
    int rtts = 0;

    while (rtts < 10) {
        now = drive(link, bwe, now, 80000, 2 * bdp, 0, FALSE);
        rtts++;
        if (qs_bwe_bandwidth(bwe) >= 0.95 * 1.25e6) {
            break;
        }
    }
    g_test_message("10 Mbit/80 ms: %.2f Mbit/s after %d RTTs, min RTT %u us",
                   qs_bwe_bandwidth(bwe) * 8 / 1e6, rtts, qs_bwe_min_rtt_us(bwe));
    g_assert_cmpfloat(qs_bwe_bandwidth(bwe), >=, 0.95 * 1.25e6);
    g_assert_cmpfloat(qs_bwe_bandwidth(bwe), <=, 1.05 * 1.25e6);
    g_assert_cmpint(rtts, <=, 10);
    g_assert_cmpuint(qs_bwe_min_rtt_us(bwe), >=, 80000);
    g_assert_cmpuint(qs_bwe_min_rtt_us(bwe), <=, 82000);
    now = drive(link, bwe, now, 2 * G_USEC_PER_SEC, 2 * bdp, 0, FALSE);
    g_assert_true(qs_bwe_pipe_full(bwe));
}

/* Idle and trickling periods, marked app-limited, keep the estimate; the
 * same trickle unmarked lowers it (so the mark is what protects it). */
static void test_app_limited(void)
{
    for (int mark = 1; mark >= 0; mark--) {
        g_autoptr(FlowSimLink) link = flow_sim_link_new(10e6, 80000);
        g_autoptr(QsBwe) bwe = qs_bwe_new();
        uint64_t bdp = flow_sim_link_bdp(link);
        int64_t now = drive(link, bwe, 0, G_USEC_PER_SEC, 2 * bdp, 0, FALSE);
        uint64_t before = qs_bwe_bandwidth(bwe);

        g_assert_cmpfloat(before, >=, 0.95 * 1.25e6);
        /* 10 s of a 1 KiB/5 ms trickle (1.6 Mbit/s): 125 round trips. */
        now = drive(link, bwe, now, 10 * G_USEC_PER_SEC, 0, 1024, mark);
        g_test_message("%s trickle: %.2f -> %.2f Mbit/s", mark ? "marked" : "unmarked",
                       before * 8 / 1e6, qs_bwe_bandwidth(bwe) * 8 / 1e6);
        if (mark) {
            g_assert_cmpuint(qs_bwe_bandwidth(bwe), ==, before);
        } else {
            g_assert_cmpfloat(qs_bwe_bandwidth(bwe), <, 0.5 * before);
        }
    }
}

/* Idle with nothing written at all keeps the estimate too. */
static void test_idle(void)
{
    g_autoptr(FlowSimLink) link = flow_sim_link_new(2e6, 150000);
    g_autoptr(QsBwe) bwe = qs_bwe_new();
    uint64_t bdp = flow_sim_link_bdp(link);
    int64_t now = drive(link, bwe, 0, 3 * G_USEC_PER_SEC, 2 * bdp, 0, FALSE);
    uint64_t before = qs_bwe_bandwidth(bwe);
    QsLinkFacts f;

    flow_sim_link_facts(link, now, &f);
    qs_bwe_mark_app_limited(bwe, f.bytes_written);
    for (int64_t end = now + 30 * G_USEC_PER_SEC; now < end; now += 100000) {
        flow_sim_link_facts(link, now, &f);
        qs_bwe_on_facts(bwe, now, &f);
    }
    g_assert_cmpuint(qs_bwe_bandwidth(bwe), ==, before);
    /* And it is still right when work resumes. */
    now = drive(link, bwe, now, G_USEC_PER_SEC, 2 * bdp, 0, FALSE);
    g_assert_cmpfloat(qs_bwe_bandwidth(bwe), >=, 0.95 * 250000);
    g_assert_cmpfloat(qs_bwe_bandwidth(bwe), <=, 1.05 * 250000);
}

/* The path slows down: the windowed max forgets the old rate. */
static void test_decrease(void)
{
    g_autoptr(FlowSimLink) link = flow_sim_link_new(10e6, 80000);
    g_autoptr(QsBwe) bwe = qs_bwe_new();
    int64_t now = drive(link, bwe, 0, G_USEC_PER_SEC, 200000, 0, FALSE);
    int rtts = 0;

    flow_sim_link_set_rate(link, 2e6);
    while (rtts < 40 && qs_bwe_bandwidth(bwe) > 1.1 * 250000) {
        now = drive(link, bwe, now, 80000, 200000, 0, FALSE);
        rtts++;
    }
    g_test_message("10 -> 2 Mbit/s: %.2f Mbit/s after %d RTTs",
                   qs_bwe_bandwidth(bwe) * 8 / 1e6, rtts);
    g_assert_cmpfloat(qs_bwe_bandwidth(bwe), <=, 1.1 * 250000);
    g_assert_cmpfloat(qs_bwe_bandwidth(bwe), >=, 0.9 * 250000);
    /* The old queue drains first (at 2 Mbit/s), then 10+ rounds of
     * samples; bounded all the same. */
    g_assert_cmpint(rtts, <, 40);
}

static void test_rtt_samples(void)
{
    g_autoptr(QsBwe) bwe = qs_bwe_new();
    int64_t now = 0;

    for (int i = 0; i < 50; i++, now += 100000) {
        qs_bwe_on_rtt_sample(bwe, now, i % 2 ? 120000 : 100000);
    }
    g_assert_cmpuint(qs_bwe_min_rtt_us(bwe), ==, 100000);
    g_assert_cmpuint(qs_bwe_srtt_us(bwe), >=, 100000);
    g_assert_cmpuint(qs_bwe_srtt_us(bwe), <=, 120000);
    qs_bwe_on_rtt_sample(bwe, now, 0);                 /* ignored */
    g_assert_cmpuint(qs_bwe_min_rtt_us(bwe), ==, 100000);

    /* The path got longer: the old minimum expires after its window. */
    for (int64_t end = now + QS_BWE_MIN_RTT_WINDOW_US + 500000; now < end;
         now += 100000) {
        qs_bwe_on_rtt_sample(bwe, now, 150000);
    }
    g_assert_cmpuint(qs_bwe_min_rtt_us(bwe), ==, 150000);
    g_assert_cmpuint(qs_bwe_srtt_us(bwe), >=, 149000);
}

static void test_delivery_samples(void)
{
    g_autoptr(QsBwe) bwe = qs_bwe_new();

    qs_bwe_on_delivery(bwe, 0, 500000, G_USEC_PER_SEC, FALSE);
    g_assert_cmpuint(qs_bwe_bandwidth(bwe), ==, 500000);
    qs_bwe_on_delivery(bwe, 0, 100000, G_USEC_PER_SEC, TRUE);   /* lower, limited */
    g_assert_cmpuint(qs_bwe_bandwidth(bwe), ==, 500000);
    qs_bwe_on_delivery(bwe, 0, 900000, G_USEC_PER_SEC, TRUE);   /* higher counts */
    g_assert_cmpuint(qs_bwe_bandwidth(bwe), ==, 900000);
    qs_bwe_on_delivery(bwe, 0, 0, G_USEC_PER_SEC, FALSE);       /* nonsense */
    qs_bwe_on_delivery(bwe, 0, 1000, 0, FALSE);
    qs_bwe_on_delivery(bwe, 0, 1000, -5, FALSE);
    g_assert_cmpuint(qs_bwe_bandwidth(bwe), ==, 900000);
}

/* A pinned bandwidth stands whatever the samples say; RTTs are still
 * measured; unpinned, the samples rule again. */
static void test_pinned(void)
{
    g_autoptr(FlowSimLink) link = flow_sim_link_new(10e6, 80000);
    g_autoptr(QsBwe) bwe = qs_bwe_new();

    qs_bwe_pin_bandwidth(bwe, 40000000);
    g_assert_cmpuint(qs_bwe_bandwidth(bwe), ==, 40000000);
    drive(link, bwe, 0, G_USEC_PER_SEC, 2 * flow_sim_link_bdp(link), 0, FALSE);
    qs_bwe_on_delivery(bwe, G_USEC_PER_SEC, 500000, G_USEC_PER_SEC, FALSE);
    g_assert_cmpuint(qs_bwe_bandwidth(bwe), ==, 40000000);
    g_assert_cmpuint(qs_bwe_min_rtt_us(bwe), >=, 80000);
    g_assert_cmpuint(qs_bwe_min_rtt_us(bwe), <=, 82000);
    qs_bwe_pin_bandwidth(bwe, 0);
    g_assert_cmpuint(qs_bwe_bandwidth(bwe), ==, 500000);
}

/* A new socket's counters start again at zero: no bogus sample. */
static void test_counter_reset(void)
{
    g_autoptr(FlowSimLink) link = flow_sim_link_new(10e6, 80000);
    g_autoptr(FlowSimLink) link2 = flow_sim_link_new(10e6, 80000);
    g_autoptr(QsBwe) bwe = qs_bwe_new();
    int64_t now = drive(link, bwe, 0, G_USEC_PER_SEC, 200000, 0, FALSE);
    uint64_t before = qs_bwe_bandwidth(bwe);

    now = drive(link2, bwe, now, 20000, 200000, 0, FALSE);
    g_assert_cmpfloat(qs_bwe_bandwidth(bwe), <=, 1.05 * before);
    now = drive(link2, bwe, now, G_USEC_PER_SEC, 200000, 0, FALSE);
    g_assert_cmpfloat(qs_bwe_bandwidth(bwe), >=, 0.95 * 1.25e6);
    g_assert_cmpfloat(qs_bwe_bandwidth(bwe), <=, 1.05 * 1.25e6);
}

/* Kernel delivery-rate samples count; app-limited ones only upwards. */
static void test_kernel_rate(void)
{
    g_autoptr(QsBwe) bwe = qs_bwe_new();
    QsLinkFacts f = { .rtt_us = 50000, .min_rtt_us = 50000,
                      .delivery_rate = 400000 };

    qs_bwe_on_facts(bwe, 0, &f);
    g_assert_cmpuint(qs_bwe_bandwidth(bwe), ==, 400000);
    f.delivery_rate = 100000;
    f.delivery_rate_app_limited = TRUE;
    qs_bwe_on_facts(bwe, 1000, &f);
    g_assert_cmpuint(qs_bwe_bandwidth(bwe), ==, 400000);
    g_assert_cmpuint(qs_bwe_min_rtt_us(bwe), ==, 50000);
    g_assert_cmpuint(qs_bwe_bdp_bytes(bwe), ==, 20000);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/flow/bwe/initial", test_initial);
    g_test_add_func("/flow/bwe/converges", test_converges);
    g_test_add_func("/flow/bwe/app-limited", test_app_limited);
    g_test_add_func("/flow/bwe/idle", test_idle);
    g_test_add_func("/flow/bwe/decrease", test_decrease);
    g_test_add_func("/flow/bwe/rtt-samples", test_rtt_samples);
    g_test_add_func("/flow/bwe/delivery-samples", test_delivery_samples);
    g_test_add_func("/flow/bwe/counter-reset", test_counter_reset);
    g_test_add_func("/flow/bwe/kernel-rate", test_kernel_rate);
    g_test_add_func("/flow/bwe/pinned", test_pinned);
    return g_test_run();
}
