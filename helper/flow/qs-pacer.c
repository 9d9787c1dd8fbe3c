/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Decides how many bytes one client's socket may take now, and when to retry. */
#include "flow/qs-pacer.h"

/*
 * Why bytes and time: spice-server and an earlier prototype stopped on an ACK
 * window counted in messages (20, blocking at 40); with 10-60 KiB images that
 * let 2-2.5 MiB queue, 2 s at 10 Mbit/s, and the key box drew 2-7 s late
 * (3492 ms p50 at 80 ms / 10 Mbit heavy, over 15 s at 150 ms / 2 Mbit).
 * Everything queued ahead of a new update delays it by queue / bandwidth, so
 * the queue is held near what the path itself holds (one BDP) and nothing
 * more: the excess would only be stale pixels.
 *
 * Band size BDP/4: a key box damaged just after a band was released waits for
 * at most the standing queue (<= 0.25 BDP in the probe phase) plus half a band
 * of overshoot, i.e. about RTT/4 + RTT/8, inside the RTT/2 we aim for. 4 KiB
 * floor: a DRAW_COPY plus image header is ~100-700 bytes. 64 KiB cap: larger
 * bands only help compression marginally and hold the link longer.
 */

#define STARTUP_GAIN 140
static const unsigned cycle_gain[8] = { 125, 75, 100, 100, 100, 100, 100, 100 };

struct QsPacer {
    gboolean cycling;
    int64_t cycle_start_us;
    unsigned gain_pct;
};

QsPacer *qs_pacer_new(void)
{
    QsPacer *pacer = g_new0(QsPacer, 1);

    pacer->gain_pct = STARTUP_GAIN;
    return pacer;
}

void qs_pacer_free(QsPacer *pacer)
{
    g_free(pacer);
}

uint32_t qs_pacer_band_bytes(const QsBwe *bwe)
{
    uint64_t band = qs_bwe_bdp_bytes(bwe) / 4;

    return (uint32_t)CLAMP(band, QS_PACER_BAND_MIN, QS_PACER_BAND_MAX);
}

uint32_t qs_pacer_notsent_lowat(const QsBwe *bwe)
{
    return qs_pacer_band_bytes(bwe);
}

unsigned qs_pacer_gain_pct(const QsPacer *pacer)
{
    return pacer->gain_pct;
}

gboolean qs_pacer_bulk_open(const QsPacerBudget *budget)
{
    return budget->bulk_bytes >= (int64_t)budget->band_bytes / 2;
}

static unsigned current_gain(QsPacer *pacer, const QsBwe *bwe, int64_t now_us)
{
    int64_t phase_us;

    if (!qs_bwe_pipe_full(bwe)) {
        return STARTUP_GAIN;
    }
    if (!pacer->cycling) {
        /* Start on the draining phase: startup left up to 0.5 BDP queued. */
        pacer->cycling = TRUE;
        pacer->cycle_start_us = now_us;
        return cycle_gain[1];
    }
    phase_us = MAX((int64_t)qs_bwe_min_rtt_us(bwe), QS_PACER_PHASE_MIN_US);
    return cycle_gain[(((now_us - pacer->cycle_start_us) / phase_us) + 1) % 8];
}

static int64_t wake_at(int64_t now_us, int64_t deficit, uint64_t bw)
{
    int64_t wait = (int64_t)((uint64_t)deficit * G_USEC_PER_SEC / bw);

    return now_us + CLAMP(wait, QS_PACER_WAKE_MIN_US, QS_PACER_WAKE_MAX_US);
}

void qs_pacer_budget(QsPacer *pacer, const QsBwe *bwe, int64_t now_us,
                     uint64_t queued_bytes, QsPacerBudget *out)
{
    uint64_t bdp = qs_bwe_bdp_bytes(bwe);
    uint64_t bw = MAX(qs_bwe_bandwidth(bwe), 1);
    uint32_t band = qs_pacer_band_bytes(bwe);
    uint64_t target;

    pacer->gain_pct = current_gain(pacer, bwe, now_us);
    target = MAX(bdp * pacer->gain_pct / 100, 2 * (uint64_t)band);
    if (pacer->gain_pct == 100) {
        /* Cruising, bulk starts a band once the queue is down to one BDP,
         * so the queue swings between BDP and BDP + band and the link
         * never waits for us (without this: ~87 % use at 10 Mbit/s). */
        target += band / 2;
    }

    out->target_bytes = target;
    out->band_bytes = band;
    out->bulk_bytes = (int64_t)target - (int64_t)queued_bytes;
    out->fast_bytes = out->bulk_bytes;
    /* The queue drains at about the bandwidth: wake when the room will have
     * opened. An early wake only costs a re-check. */
    out->wake_us = 0;
    if (!qs_pacer_bulk_open(out)) {
        out->wake_us = wake_at(now_us, (int64_t)band / 2 - out->bulk_bytes, bw);
    }
    out->fast_wake_us = 0;
    if (out->fast_bytes <= 0) {
        out->fast_wake_us = wake_at(now_us, 1 - out->fast_bytes, bw);
    }
}
