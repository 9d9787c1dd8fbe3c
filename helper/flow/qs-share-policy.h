/* SPDX-License-Identifier: GPL-2.0-or-later */
/* When the viewers of one console share a video encoder: bit-rate classes, a tier's rate, and when a seat that fell behind catches up or goes on alone. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "util/qs-share-rules.h"

/*
 * The rules behind encode/qs-video-share.c, which keeps the tiers (one
 * encoder each) and their seats (one per viewer's stream) and asks these
 * (through qs_share_rules, the table util/qs-share-rules.h declares) with
 * the facts and the time. Nothing here reads a clock or the
 * environment.
 *
 * Viewers share a tier when their bit rates are of one class, a factor of
 * two from 64 kbit/s up. A seat leaves its tier's class only when more than
 * half a class beyond it (a factor of 1.41), so a rate near a boundary does
 * not move it to and fro. A shared encoder runs at the lowest rate its
 * viewers' plans allow.
 */

/* Frames a seat may fall behind before it catches up at a keyframe, and
 * how soon after one catch-up another sends it off alone. */
#define QS_SHARE_CATCH_UP_FRAMES 4
#define QS_SHARE_CATCH_UP_GAP_US (2 * G_USEC_PER_SEC)

/* Whether streams share at all, from QS_STREAM_SHARE's value (NULL: not
 * set): "0" turns sharing off, every stream then has an encoder of its own. */
gboolean qs_share_enabled(const char *setting);

/* The class of `bitrate` (bit/s): 0 up to 128 kbit/s, then one more per
 * doubling. */
int qs_share_rate_class(uint32_t bitrate);
/* `bitrate` is more than half a class out of class `cls`. */
gboolean qs_share_outside_class(uint32_t bitrate, int cls);
/* A tier's encoder rate: the lowest of its seats' `n` rates (0: not set,
 * skipped while no rate is set yet), `fallback` when that comes to 0. */
uint32_t qs_share_tier_rate(const uint32_t *rates, guint n, uint32_t fallback);

/* A seat `behind` frames behind its tier's next (`lost`: further than
 * the tier keeps), among `seats`, that last caught up at `caught_up_us`. */
QsShareLag qs_share_lag(uint64_t behind, gboolean lost, guint seats, int64_t caught_up_us,
                        int64_t now_us);

/* A seat of a tier others may join, with `seats` seats, of class
 * `tier_class` read every `tier_read_div` intervals, now asked for
 * `bitrate` every `read_div`; `other`: another such tier suits it. */
QsShareMove qs_share_move(guint seats, gboolean other, uint32_t bitrate, int tier_class,
                          guint read_div, guint tier_read_div);

/* The calls above as the table encode/qs-video-share.h takes. */
extern const QsShareRules qs_share_rules;
