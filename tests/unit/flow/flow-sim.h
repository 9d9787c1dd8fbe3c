/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A simulated TCP link for flow tests: a send buffer drained at the link rate. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "flow/qs-bwe.h"
#include "flow/qs-scheduler.h"
#include "util/qs-rect.h"

/*
 * Bytes written go into the socket's send buffer; the link transmits them in
 * order at `bits_per_sec` (the socket's unsent part is what waits); a byte
 * transmitted at time t reaches the receiver at t + rtt/2 and its ACK is back
 * at t + rtt. No loss, no cwnd: the sender's own queue is the only queue,
 * which is what the pacer is meant to keep short.
 */

typedef struct FlowSimLink FlowSimLink;

/* A link a test runs on: rate and round trip. */
typedef struct {
    const char *name;
    double bits_per_sec;
    int64_t rtt_us;
} FlowSimLinkCase;

FlowSimLink *flow_sim_link_new(double bits_per_sec, int64_t rtt_us);
void flow_sim_link_free(FlowSimLink *link);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FlowSimLink, flow_sim_link_free)

/* Queues `bytes` at `now_us`; returns when its first byte starts onto the
 * link (microseconds, fractional). */
double flow_sim_link_write(FlowSimLink *link, int64_t now_us, uint64_t bytes);

/* What TCP_INFO would report at `now_us`. */
void flow_sim_link_facts(FlowSimLink *link, int64_t now_us, QsLinkFacts *out);

uint64_t flow_sim_link_written(const FlowSimLink *link);
uint64_t flow_sim_link_acked(FlowSimLink *link, int64_t now_us);
/* unsent + in flight */
uint64_t flow_sim_link_queued(FlowSimLink *link, int64_t now_us);
/* Bytes written from now on are transmitted at the new rate. */
void flow_sim_link_set_rate(FlowSimLink *link, double bits_per_sec);
double flow_sim_link_bytes_per_sec(const FlowSimLink *link);
int64_t flow_sim_link_rtt_us(const FlowSimLink *link);
uint64_t flow_sim_link_bdp(const FlowSimLink *link);

/* Pixels a and b share. */
int64_t flow_sim_overlap(const QsRect *a, const QsRect *b);
/* What an image of r costs as the tests' content would encode: `noise`
 * 1-3 bytes a pixel (drawn from rng), the `glyph` 1, the still desktop
 * 0.25, plus a message and image header. */
uint32_t flow_sim_image_bytes(GRand *rng, const QsRect *r, const QsRect *noise,
                              const QsRect *glyph);

/*
 * The screen's heat for a simulated activity, as the plan gives it to the
 * scheduler: a real QsScreen whose rectangles are changed (new pixels every
 * time, so every change counts), snapshotted every FLOW_SIM_HEAT_US.
 */
#define FLOW_SIM_HEAT_US 10000
typedef struct FlowSimHeat FlowSimHeat;

FlowSimHeat *flow_sim_heat_new(uint32_t width, uint32_t height, int64_t now_us);
void flow_sim_heat_free(FlowSimHeat *heat);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FlowSimHeat, flow_sim_heat_free)
void flow_sim_heat_change(FlowSimHeat *heat, const QsRect *r, int64_t now_us);
/* A new snapshot to `sched` when the last is FLOW_SIM_HEAT_US old. */
void flow_sim_heat_feed(FlowSimHeat *heat, QsScheduler *sched, int64_t now_us);
