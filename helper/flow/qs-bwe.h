/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Estimates one client's round-trip time and bottleneck bandwidth. */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "util/qs-link-facts.h"

/*
 * Pure: every call takes `now_us` (g_get_monotonic_time() or a fake clock).
 * Bandwidth is the windowed maximum of delivery-rate samples over the last
 * QS_BWE_BW_ROUNDS round trips that carried data (BBR's BtlBw), also no older
 * than QS_BWE_BW_ROUNDS min RTTs when newer full-speed samples exist; samples taken
 * while the sender had nothing to send ("application-limited") may raise the
 * estimate but never lower it, so idle periods keep the last estimate.
 * RTT is the windowed minimum (QS_BWE_MIN_RTT_WINDOW_US) plus a smoothed RTT.
 *
 * Two sources, because TCP_INFO sees only the hop to the other end of our
 * socket, which may be a proxy: once the client's own end-to-end samples
 * arrive (qs_bwe_on_rtt_sample, qs_bwe_on_delivery: its PONGs, qs-e2e.h),
 * they alone give the RTT, and the bandwidth once one of them was taken at
 * full speed; TCP_INFO's serve until then.
 */

#define QS_BWE_BW_ROUNDS 10
#define QS_BWE_BW_MIN_WINDOW_US 250000   /* ... and at most max(10 min RTT, this) old */
#define QS_BWE_MIN_RTT_WINDOW_US (10 * G_USEC_PER_SEC)
#define QS_BWE_INITIAL_BW 125000u      /* bytes/s (1 Mbit/s) before any sample */
#define QS_BWE_INITIAL_RTT_US 100000u  /* before any RTT sample */

typedef struct QsBwe QsBwe;

QsBwe *qs_bwe_new(void);
void qs_bwe_free(QsBwe *bwe);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsBwe, qs_bwe_free)

/* A socket snapshot; call it whenever the channel is about to decide what to
 * send (each write, each pacer wake-up). Counters going backwards (a new
 * connection) are ignored as samples. */
void qs_bwe_on_facts(QsBwe *bwe, int64_t now_us, const QsLinkFacts *facts);

/* An end-to-end RTT sample, e.g. PING sent to PONG received; from the first
 * one on, TCP_INFO's RTTs are ignored. */
void qs_bwe_on_rtt_sample(QsBwe *bwe, int64_t now_us, uint32_t rtt_us);

/* An end-to-end delivery sample: `bytes` the client read over `interval_us`
 * (qs-e2e.c, from its PONGs). Kept in a filter of its own that, once it
 * holds a sample, is the bandwidth: a proxy hides the bottleneck from
 * TCP_INFO. Its first sample counts even if `app_limited`; later limited
 * ones only above the filter's maximum. */
void qs_bwe_on_delivery(QsBwe *bwe, int64_t now_us, uint64_t bytes,
                        int64_t interval_us, gboolean app_limited);

/* The sender ran out of work with room to send: data written up to
 * `bytes_written` was sent application-limited. */
void qs_bwe_mark_app_limited(QsBwe *bwe, uint64_t bytes_written);

/* A round trip of the client's ended (qs-e2e.c): startup's end is judged
 * on these once its samples rule. */
void qs_bwe_on_e2e_round(QsBwe *bwe, gboolean unlimited);

uint64_t qs_bwe_bandwidth(const QsBwe *bwe);     /* bytes/s */
/* From now on the bandwidth is `bytes_per_s` whatever the samples say (0:
 * the samples again); RTTs are still measured. For tests whose outcome
 * must not hang on an estimate: a sanitizer build's own slowness caps the
 * rate it can measure. */
void qs_bwe_pin_bandwidth(QsBwe *bwe, uint64_t bytes_per_s);
/* The client's own estimate, 0 until it has one. */
uint64_t qs_bwe_e2e_bandwidth(const QsBwe *bwe);
uint32_t qs_bwe_min_rtt_us(const QsBwe *bwe);
uint32_t qs_bwe_srtt_us(const QsBwe *bwe);
/* bandwidth x min RTT, both from the same source */
uint64_t qs_bwe_bdp_bytes(const QsBwe *bwe);
/* Bandwidth stopped growing by 25 % over three unlimited rounds. */
gboolean qs_bwe_pipe_full(const QsBwe *bwe);
/* The bandwidth was measured while the sender was held back (by the link
 * or its own pacing), or it is pinned. FALSE while it is the most that an
 * application-limited sender got through: a floor of the link's, which a
 * sender slower than its link (a loaded helper on a LAN) never exceeds. */
gboolean qs_bwe_link_known(const QsBwe *bwe);
uint64_t qs_bwe_rounds(const QsBwe *bwe);
