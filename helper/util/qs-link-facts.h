/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The socket facts net reads for flow's estimators (QsLinkFacts). */
#pragma once

#include <glib.h>
#include <stdint.h>

/* Here, below both, so that net (which fills it) does not need flow (which
 * reads it: qs-bwe.h, qs-display-plan.h). */

/* What the net layer reads from the socket (TCP_INFO, SIOCOUTQ/SIOCOUTQNSD)
 * and its own write counter. Zero means "unknown" for every field except the
 * byte counters. bytes_written and bytes_acked must count the same stream
 * from the same origin; without tcpi_bytes_acked use
 * bytes_written - unsent_bytes - in_flight_bytes. */
typedef struct {
    uint64_t bytes_written;         /* total handed to the socket by us */
    uint64_t bytes_acked;           /* tcpi_bytes_acked */
    uint32_t unsent_bytes;          /* tcpi_notsent_bytes */
    uint32_t in_flight_bytes;       /* tcpi_unacked * tcpi_snd_mss */
    uint32_t rtt_us;                /* tcpi_rtt (the kernel's srtt) */
    uint32_t min_rtt_us;            /* tcpi_min_rtt */
    uint64_t delivery_rate;         /* tcpi_delivery_rate, bytes/s */
    gboolean delivery_rate_app_limited; /* tcpi_delivery_rate_app_limited */
} QsLinkFacts;
