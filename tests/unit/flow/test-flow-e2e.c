/* SPDX-License-Identifier: GPL-2.0-or-later */
/* End-to-end ACKs from PONGs: matching, in-flight, and pacing behind a simulated proxy. */
#include "flow-sim.h"
#include "flow/qs-bwe.h"
#include "flow/qs-e2e.h"
#include "flow/qs-pacer.h"

#define PING_BYTES 18       /* mini header + id + timestamp */

static void test_pong_matching(void)
{
    g_autoptr(QsE2e) e2e = qs_e2e_new();
    g_autoptr(QsBwe) bwe = qs_bwe_new();

    g_assert_false(qs_e2e_probe_due(e2e, bwe, 0, 0, TRUE));     /* nothing sent */
    g_assert_true(qs_e2e_probe_due(e2e, bwe, 0, 1000, FALSE));  /* the first at once */
    qs_e2e_probe_sent(e2e, 0, 1, 1000);
    g_assert_false(qs_e2e_probe_due(e2e, bwe, 1000, 1000, TRUE));   /* nothing new */
    g_assert_false(qs_e2e_probe_due(e2e, bwe, 1000, 5000, FALSE));  /* spacing */
    g_assert_true(qs_e2e_probe_due(e2e, bwe, 1000, 5000, TRUE));    /* at rest */
    /* Spacing: a quarter of the (initial, 100 ms) min RTT. */
    g_assert_false(qs_e2e_probe_due(e2e, bwe, QS_BWE_INITIAL_RTT_US / 4 - 1, 5000, FALSE));
    g_assert_true(qs_e2e_probe_due(e2e, bwe, QS_BWE_INITIAL_RTT_US / 4, 5000, FALSE));
    qs_e2e_probe_sent(e2e, 1000, 2, 5000);
    qs_e2e_probe_sent(e2e, 2000, 3, 9000);

    g_assert_false(qs_e2e_on_pong(e2e, bwe, 20000, 77));        /* not ours */
    g_assert_true(qs_e2e_on_pong(e2e, bwe, 21000, 2));          /* implies 1 */
    g_assert_cmpuint(qs_e2e_acked(e2e), ==, 5000);
    g_assert_cmpuint(qs_bwe_min_rtt_us(bwe), ==, 20000);        /* the client's RTT */
    g_assert_false(qs_e2e_on_pong(e2e, bwe, 22000, 1));         /* dropped with 2 */
    g_assert_false(qs_e2e_on_pong(e2e, bwe, 22000, 2));         /* once only */
    g_assert_true(qs_e2e_on_pong(e2e, bwe, 23000, 3));
    g_assert_cmpuint(qs_e2e_pongs(e2e), ==, 2);

    /* A client that answers nothing is not probed without bound. */
    for (uint32_t i = 0; i < 2 * QS_E2E_PROBES; i++) {
        if (qs_e2e_probe_due(e2e, bwe, 100000 + i, 10000 + i, TRUE)) {
            qs_e2e_probe_sent(e2e, 100000 + i, 100 + i, 10000 + i);
        }
    }
    g_assert_false(qs_e2e_probe_due(e2e, bwe, 200000, 99999, TRUE));
    g_assert_true(qs_e2e_on_pong(e2e, bwe, 300000, 100 + QS_E2E_PROBES - 1));
    g_assert_true(qs_e2e_probe_due(e2e, bwe, 300000, 99999, TRUE));
}

static void test_in_flight(void)
{
    g_autoptr(QsE2e) e2e = qs_e2e_new();
    g_autoptr(QsBwe) bwe = qs_bwe_new();
    uint64_t bw = 250000;

    /* Before any probe the socket's own figure stands alone; from the first
     * probe to its PONG all that was sent counts as unread. */
    g_assert_cmpuint(qs_e2e_in_flight(e2e, bwe, 0, 50000), ==, 0);
    qs_e2e_probe_sent(e2e, 0, 1, 10000);
    g_assert_cmpuint(qs_e2e_in_flight(e2e, bwe, 30000, 50000), ==, 50000);
    /* A client that never answers is paced by TCP_INFO alone. */
    g_assert_cmpuint(qs_e2e_in_flight(e2e, bwe, QS_E2E_SILENT_US, 50000), ==, 0);
    g_assert_true(qs_e2e_on_pong(e2e, bwe, 40000, 1));
    /* Without the client's own rate nothing is assumed read between PONGs. */
    g_assert_cmpuint(qs_e2e_in_flight(e2e, bwe, 50000, 60000), ==, 50000);
    qs_bwe_on_delivery(bwe, 40000, bw / 10, 100000, FALSE);
    g_assert_cmpuint(qs_bwe_e2e_bandwidth(bwe), ==, bw);
    /* Right at the PONG: all after its byte is unread. */
    g_assert_cmpuint(qs_e2e_in_flight(e2e, bwe, 40000, 60000), ==, 50000);
    /* 10 ms later the client read about bw x 10 ms more. */
    g_assert_cmpuint(qs_e2e_in_flight(e2e, bwe, 50000, 60000), ==, 50000 - bw / 100);
    /* A client silent for longer than two probe spacings is not assumed to
     * go on reading. */
    g_assert_cmpuint(qs_e2e_in_flight(e2e, bwe, 40000 + 10 * QS_E2E_PROBE_MIN_US, 60000), ==,
                     50000 - bw * 2 * QS_E2E_PROBE_MIN_US / G_USEC_PER_SEC);
}

/* The kernel's view of a hop to a proxy: 30 us, 6 GB/s. The client's: 20 ms,
 * 250 kB/s. The client's wins for RTT at once, for bandwidth with its first
 * sample, even one of a sender that paused (the relay's rate says nothing of
 * the path), and TCP_INFO cannot raise it again. */
static void test_outranks_tcp(void)
{
    g_autoptr(QsBwe) bwe = qs_bwe_new();
    QsLinkFacts f = { .bytes_written = 1 << 20, .bytes_acked = 1 << 20, .rtt_us = 30,
                      .min_rtt_us = 30, .delivery_rate = 6000000000ull };

    qs_bwe_on_facts(bwe, 1000, &f);
    g_assert_cmpuint(qs_bwe_bandwidth(bwe), ==, 6000000000ull);
    g_assert_cmpuint(qs_bwe_min_rtt_us(bwe), ==, 30);
    qs_bwe_on_rtt_sample(bwe, 2000, 20000);
    g_assert_cmpuint(qs_bwe_min_rtt_us(bwe), ==, 20000);
    qs_bwe_on_delivery(bwe, 3000, 2500, 100000, TRUE);
    g_assert_cmpuint(qs_bwe_bandwidth(bwe), ==, 25000);
    qs_bwe_on_delivery(bwe, 4000, 25000, 100000, FALSE);
    g_assert_cmpuint(qs_bwe_bandwidth(bwe), ==, 250000);
    /* An application-limited sample under the client's rate says nothing. */
    qs_bwe_on_delivery(bwe, 4500, 2500, 100000, TRUE);
    g_assert_cmpuint(qs_bwe_bandwidth(bwe), ==, 250000);
    f.bytes_written += 1 << 20;
    f.bytes_acked += 1 << 20;
    qs_bwe_on_facts(bwe, 5000, &f);
    g_assert_cmpuint(qs_bwe_bandwidth(bwe), ==, 250000);
    g_assert_cmpuint(qs_bwe_min_rtt_us(bwe), ==, 20000);
}

typedef struct {
    const char *name;
    double bits_per_sec;
    int64_t rtt_us;
} Path;

typedef struct {
    uint32_t id;
    uint64_t bytes;
} SimProbe;

static double bdp_of(const Path *p)
{
    return p->bits_per_sec / 8 * (double)p->rtt_us / 1e6;
}

/*
 * A sender that always has bulk work, a socket to a proxy on the same host
 * (1 Gbit/s, 100 us) and, behind the proxy's unbounded buffer, the real
 * path. The proxy forwards what its socket acknowledged; the client answers
 * each PING when it has received it. Without end-to-end ACKs the pacer sees
 * only the fast hop and the proxy's buffer grows without bound.
 */
static void run_proxied(const Path *p, double *unread_max_bdp, double *goodput_share,
                        double *bw_share)
{
    const int64_t step = 250, duration = 10 * G_USEC_PER_SEC, warm = 3 * G_USEC_PER_SEC;
    g_autoptr(FlowSimLink) local = flow_sim_link_new(1e9, 100);
    g_autoptr(FlowSimLink) path = flow_sim_link_new(p->bits_per_sec, p->rtt_us);
    g_autoptr(QsBwe) bwe = qs_bwe_new();
    g_autoptr(QsPacer) pacer = qs_pacer_new();
    g_autoptr(QsE2e) e2e = qs_e2e_new();
    g_autoptr(GArray) probes = g_array_new(FALSE, FALSE, sizeof(SimProbe));
    double bdp = bdp_of(p);
    uint64_t forwarded = 0, read_at_warm = 0, unread_max = 0;
    uint32_t next_id = 1;

    for (int64_t now = 0; now < duration; now += step) {
        uint64_t la = flow_sim_link_acked(local, now);
        uint64_t read;
        QsLinkFacts f;

        if (la > forwarded) {
            flow_sim_link_write(path, now, la - forwarded);
            forwarded = la;
        }
        /* A PONG is back once the path's ACK for the PING's last byte is. */
        while (probes->len &&
               flow_sim_link_acked(path, now) >= g_array_index(probes, SimProbe, 0).bytes) {
            qs_e2e_on_pong(e2e, bwe, now, g_array_index(probes, SimProbe, 0).id);
            g_array_remove_index(probes, 0);
        }
        for (;;) {
            QsPacerBudget b;
            uint64_t sent = flow_sim_link_written(local);

            flow_sim_link_facts(local, now, &f);
            qs_bwe_on_facts(bwe, now, &f);
            qs_pacer_budget(pacer, bwe, now,
                            MAX((uint64_t)f.unsent_bytes + f.in_flight_bytes,
                                qs_e2e_in_flight(e2e, bwe, now, sent)), &b);
            if (!qs_pacer_bulk_open(&b)) {
                break;
            }
            flow_sim_link_write(local, now, b.band_bytes);
            sent = flow_sim_link_written(local);
            if (qs_e2e_probe_due(e2e, bwe, now, sent, FALSE)) {
                SimProbe pr = { next_id++, sent + PING_BYTES };

                flow_sim_link_write(local, now, PING_BYTES);
                qs_e2e_probe_sent(e2e, now, pr.id, pr.bytes);
                g_array_append_val(probes, pr);
            }
        }
        if (qs_e2e_probe_due(e2e, bwe, now, flow_sim_link_written(local), TRUE)) {
            SimProbe pr = { next_id++, flow_sim_link_written(local) + PING_BYTES };

            flow_sim_link_write(local, now, PING_BYTES);
            qs_e2e_probe_sent(e2e, now, pr.id, pr.bytes);
            g_array_append_val(probes, pr);
        }
        /* What the client has received by now. */
        read = flow_sim_link_acked(path, now + p->rtt_us / 2);
        if (now >= warm) {
            if (!read_at_warm) {
                read_at_warm = read;
            }
            unread_max = MAX(unread_max, flow_sim_link_written(local) - read);
        }
    }
    *unread_max_bdp = (double)unread_max / bdp;
    *goodput_share = (double)(flow_sim_link_acked(path, duration + p->rtt_us / 2) -
                              read_at_warm) /
                     (flow_sim_link_bytes_per_sec(path) * (double)(duration - warm) / 1e6);
    *bw_share = (double)qs_bwe_bandwidth(bwe) / flow_sim_link_bytes_per_sec(path);
    g_test_message("%s: unread max %.2f BDP (%.0f bytes), goodput %.0f %%, "
                   "estimate %.2f x the path, min RTT %u us",
                   p->name, *unread_max_bdp, (double)unread_max, *goodput_share * 100,
                   *bw_share, qs_bwe_min_rtt_us(bwe));
}

static void test_proxied(void)
{
    static const Path paths[] = {
        { "2 Mbit / 150 ms", 2e6, 150000 },
        { "10 Mbit / 80 ms", 10e6, 80000 },
        { "2 Mbit / 4 ms", 2e6, 4000 },
        { "50 Mbit / 20 ms", 50e6, 20000 },
    };

    for (guint i = 0; i < G_N_ELEMENTS(paths); i++) {
        double unread, goodput, bw;

        run_proxied(&paths[i], &unread, &goodput, &bw);
        /* Near one BDP beyond the sender, as on a direct link: 1.5 BDP,
         * plus the pacer's floor of two bands and one band of overshoot
         * on paths whose BDP is under a band. */
        g_assert_cmpfloat(unread * bdp_of(&paths[i]), <=,
                          1.5 * bdp_of(&paths[i]) + 3 * QS_PACER_BAND_MIN);
        g_assert_cmpfloat(goodput, >=, 0.9);
        g_assert_cmpfloat(bw, >=, 0.9);
        g_assert_cmpfloat(bw, <=, 1.2);
    }
}

/* A sender behind a relay whose socket reports gigabytes a second, writing
 * a frame every 10 ms and idling between frames (an idle mark each time).
 * The path: 20 ms, 250 KB/s, one queue. The client's rate rules from its
 * first sample; returns it, and whether the link was seen to hold the
 * sender back. */
static uint64_t run_framed(uint64_t frame_bytes, gboolean *known)
{
    g_autoptr(QsE2e) e2e = qs_e2e_new();
    g_autoptr(QsBwe) bwe = qs_bwe_new();
    QsLinkFacts relay = { .rtt_us = 1000, .min_rtt_us = 1000, .delivery_rate = 3648000000u };
    const double rate = 250000, rtt_us = 20000;
    int64_t pong_at[200];
    double depart = 0;
    uint64_t sent = 0;
    uint32_t id = 0, answered = 0;

    for (int64_t now = 0; now < G_USEC_PER_SEC; now += 1000) {
        while (answered < id && pong_at[answered] <= now) {
            qs_e2e_on_pong(e2e, bwe, now, ++answered);
        }
        if (now % 10000) {
            continue;
        }
        sent += frame_bytes;
        relay.bytes_written = relay.bytes_acked = sent;
        qs_bwe_on_facts(bwe, now, &relay);
        depart = MAX(depart, (double)now) + (double)frame_bytes / rate * 1e6;
        if (qs_e2e_probe_due(e2e, bwe, now, sent, TRUE)) {
            /* The PING rides behind the frame; its own bytes are left out. */
            pong_at[id] = (int64_t)(depart + rtt_us);
            qs_e2e_probe_sent(e2e, now, ++id, sent);
        }
        qs_e2e_mark_app_limited(e2e, sent);
    }
    g_assert_cmpuint(qs_bwe_bandwidth(bwe), ==, qs_bwe_e2e_bandwidth(bwe));
    *known = qs_bwe_link_known(bwe);
    return qs_bwe_e2e_bandwidth(bwe);
}

/* Idle marks say the sender waited for work, not that the link waited for
 * the sender: frames over the path's rate queue up, and the spans that read
 * that backlog measure the link. Under the path's rate the link waits
 * between frames and the marks stand: the rate is the sender's, a floor. */
static void test_backlog(void)
{
    gboolean over_known, under_known;
    uint64_t over = run_framed(5000, &over_known);       /* 500 KB/s into 250 */
    uint64_t under = run_framed(1000, &under_known);     /* 100 KB/s */

    g_test_message("client's rate: %" G_GUINT64_FORMAT " B/s (%s) over the path's rate, %"
                   G_GUINT64_FORMAT " B/s (%s) under it", over,
                   over_known ? "the link's" : "a floor", under,
                   under_known ? "the link's" : "a floor");
    g_assert_cmpuint(over, >=, 225000);
    g_assert_cmpuint(over, <=, 275000);
    g_assert_true(over_known);
    g_assert_cmpuint(under, >=, 90000);
    g_assert_cmpuint(under, <=, 110000);
    g_assert_false(under_known);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/flow/e2e/pong-matching", test_pong_matching);
    g_test_add_func("/flow/e2e/in-flight", test_in_flight);
    g_test_add_func("/flow/e2e/outranks-tcp", test_outranks_tcp);
    g_test_add_func("/flow/e2e/proxied", test_proxied);
    g_test_add_func("/flow/e2e/backlog", test_backlog);
    return g_test_run();
}
