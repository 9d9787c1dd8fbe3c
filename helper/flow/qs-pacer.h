/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Decides how many bytes one client's socket may take now, and when to retry. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "flow/qs-bwe.h"

/*
 * The socket (unsent + in flight) is kept near one bandwidth-delay product:
 * target = max(gain x BDP, 2 bands) (+ half a band at gain 1). gain is 1.4
 * while the bandwidth is still being discovered (40 % growth per round, well
 * above the 25 % that ends discovery), then cycles 1.25, 0.75, 1 x 6, one
 * phase per min RTT (the 1.25 phase finds more bandwidth, the 0.75 phase
 * drains what it queued, as BBR's ProbeBW does). Bulk work may start while
 * the queue is at least half a band below target (so it overshoots by about
 * half a band); fast-lane work may start while the queue is below target,
 * so a small update waits at most for that overshoot to drain.
 */

#define QS_PACER_BAND_MIN 4096u          /* bytes; smaller costs headers */
#define QS_PACER_BAND_MAX 65536u         /* bytes; the lead's 64 KiB cap */
#define QS_PACER_WAKE_MIN_US 100
#define QS_PACER_WAKE_MAX_US 100000
#define QS_PACER_PHASE_MIN_US 1000

typedef struct {
    uint64_t target_bytes;   /* what the queue should hold */
    int64_t bulk_bytes;      /* room for bulk work now (may be <= 0) */
    int64_t fast_bytes;      /* room for fast-lane work now (may be <= 0) */
    uint32_t band_bytes;     /* encoded size a bulk band should aim for */
    int64_t wake_us;         /* bulk blocked: absolute time to ask again; 0 if not blocked */
    int64_t fast_wake_us;    /* the same for fast-lane work */
} QsPacerBudget;

typedef struct QsPacer QsPacer;

QsPacer *qs_pacer_new(void);
void qs_pacer_free(QsPacer *pacer);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsPacer, qs_pacer_free)

/* `queued_bytes`: unsent + in flight in the socket, plus bytes the channel
 * has picked but not yet written (encoding or in its own buffer). */
void qs_pacer_budget(QsPacer *pacer, const QsBwe *bwe, int64_t now_us,
                     uint64_t queued_bytes, QsPacerBudget *out);

/* Bulk budget is usable (the scheduler's threshold for starting a band). */
gboolean qs_pacer_bulk_open(const QsPacerBudget *budget);

/* The current pacing gain in 1/100 (tests and statistics). */
unsigned qs_pacer_gain_pct(const QsPacer *pacer);

/* Band size for the current estimate: BDP/4 within [BAND_MIN, BAND_MAX]. */
uint32_t qs_pacer_band_bytes(const QsBwe *bwe);

/* What the net layer should set as TCP_NOTSENT_LOWAT: one band, so the
 * socket reports writable when a band can follow without queueing. */
uint32_t qs_pacer_notsent_lowat(const QsBwe *bwe);
