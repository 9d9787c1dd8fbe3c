/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What one client has read, as its PONGs to our PINGs tell, end to end. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "flow/qs-bwe.h"

/*
 * TCP_INFO describes the hop to whatever holds the other end of our socket.
 * Behind a proxy (Kerbside, websockify, a relay) that is a fast local hop, and
 * everything the proxy cannot forward yet waits in its buffers where
 * TCP_INFO never sees it: pacing on it filled a 2 Mbit path behind a relay
 * with 800 ms of frames. A client answers a PING as it reads it, after
 * everything sent before it, so a PING placed after byte B tells, when its
 * PONG returns, that the client had read B: that is an end-to-end ACK.
 *
 * The channel sends a probe (PING) while it sends data, at most one per
 * QS_E2E_PROBE_MIN_US or min RTT / 4, records the message bytes it had sent
 * including the PING, and hands each PONG here. Each PONG gives QsBwe an RTT
 * sample and, over a span of at least one min RTT, a delivery-rate sample,
 * which then outranks TCP_INFO's (qs-bwe.h). What is in flight end to end is
 * what was sent minus what the newest PONG covered, minus what the path can
 * have delivered since at the estimated bandwidth (for at most two probe
 * spacings: a client that stops answering is not assumed to read).
 *
 * Byte counts are the channel's own (message payload + header, before TLS),
 * from the start of the connection.
 */

#define QS_E2E_PROBES 32                /* PINGs awaiting their PONG */
#define QS_E2E_PROBE_MIN_US 10000       /* at most 100 probes a second */
#define QS_E2E_SPAN_MIN_US 50000        /* shortest span of a rate sample */
#define QS_E2E_SILENT_US (3 * G_USEC_PER_SEC) /* no first PONG: a client that never answers */

typedef struct QsE2e QsE2e;

QsE2e *qs_e2e_new(void);
void qs_e2e_free(QsE2e *e2e);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsE2e, qs_e2e_free)

/* Whether a probe should follow what was just sent: data went out since the
 * last probe, the spacing has passed (or the sender stops: `at_rest`, so
 * the tail of a burst is covered and a blocked sender learns when it may
 * go on), and a slot is free. */
gboolean qs_e2e_probe_due(const QsE2e *e2e, const QsBwe *bwe, int64_t now_us,
                          uint64_t sent_bytes, gboolean at_rest);

/* A PING with `id` went out; `sent_bytes` counts it and all before it. */
void qs_e2e_probe_sent(QsE2e *e2e, int64_t now_us, uint32_t id, uint64_t sent_bytes);

/* A PONG echoed `id`. Unknown ids (not ours, repeated, or evicted) are
 * ignored and return FALSE; a PONG implies the PONGs of earlier probes,
 * which are dropped. Feeds `bwe` an RTT and maybe a delivery sample. */
gboolean qs_e2e_on_pong(QsE2e *e2e, QsBwe *bwe, int64_t now_us, uint32_t id);

/* The sender had nothing more to send at `sent_bytes`: delivery spans that
 * start at or before it say how fast we sent, not what the path carries. */
void qs_e2e_mark_app_limited(QsE2e *e2e, uint64_t sent_bytes);

/* Bytes sent and not yet read by the client, as far as the PONGs and the
 * bandwidth estimate tell: before the first probe 0 (TCP_INFO stands alone),
 * from the first probe to the first PONG all that was sent, and 0 again if
 * no PONG came within QS_E2E_SILENT_US. */
uint64_t qs_e2e_in_flight(const QsE2e *e2e, const QsBwe *bwe, int64_t now_us,
                          uint64_t sent_bytes);

/* Bytes the newest PONG covered, and PONGs matched (statistics, tests). */
uint64_t qs_e2e_acked(const QsE2e *e2e);
uint64_t qs_e2e_pongs(const QsE2e *e2e);
