/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rules a console's shared video encoders follow, as a table of calls (QsShareRules). */
#pragma once

#include <glib.h>
#include <stdint.h>

/* Here, below both, so that encode/qs-video-share.c (which keeps the tiers
 * and runs their encodes) asks the rules without depending on flow, and
 * flow/qs-share-policy.c (which holds them) without depending on encode;
 * channels hands flow's table to each console's share. */

typedef enum {
    QS_SHARE_KEEP,          /* in step: the rate rules decide */
    QS_SHARE_RESTART,       /* alone, and the frames it needs are gone: to the head */
    QS_SHARE_CATCH_UP,      /* behind: to the head, at a keyframe for all */
    QS_SHARE_GO_SOLO,       /* behind again soon after: a tier of its own */
} QsShareLag;

typedef enum {
    QS_SHARE_STAY,          /* its tier suits it */
    QS_SHARE_JOIN,          /* alone, and another tier suits it: join that one */
    QS_SHARE_FOLLOW,        /* alone: its tier takes its class and frame rate */
    QS_SHARE_LEAVE,         /* out of its shared tier's class or frame rate */
} QsShareMove;

/* What each call answers is written beside flow's functions of the same
 * name (flow/qs-share-policy.h: qs_share_rate_class, ...). */
typedef struct {
    int (*rate_class)(uint32_t bitrate);
    uint32_t (*tier_rate)(const uint32_t *rates, guint n, uint32_t fallback);
    QsShareLag (*lag)(uint64_t behind, gboolean lost, guint seats, int64_t caught_up_us,
                      int64_t now_us);
    QsShareMove (*move)(guint seats, gboolean other, uint32_t bitrate, int tier_class,
                        guint read_div, guint tier_read_div);
} QsShareRules;
