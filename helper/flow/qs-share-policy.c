/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rules of encoders shared by a console's viewers: rate classes, a tier's rate, catch-up and going alone. */
#include "flow/qs-share-policy.h"

#include <string.h>

gboolean qs_share_enabled(const char *setting)
{
    return !setting || strcmp(setting, "0") != 0;
}

int qs_share_rate_class(uint32_t bitrate)
{
    int c = 0;

    for (uint32_t b = MAX(bitrate, 1u) / 64000u; b > 1; b >>= 1) {
        c++;
    }
    return c;
}

gboolean qs_share_outside_class(uint32_t bitrate, int cls)
{
    double lo = 64000.0 * (double)(1u << cls), hi = lo * 2;

    return bitrate < lo / 1.41 || bitrate >= hi * 1.41;
}

uint32_t qs_share_tier_rate(const uint32_t *rates, guint n, uint32_t fallback)
{
    uint32_t rate = 0;

    for (guint i = 0; i < n; i++) {
        rate = rate ? MIN(rate, rates[i]) : rates[i];
    }
    return rate ? rate : fallback;
}

QsShareLag qs_share_lag(uint64_t behind, gboolean lost, guint seats, int64_t caught_up_us,
                        int64_t now_us)
{
    if (lost && seats == 1) {
        return QS_SHARE_RESTART;        /* the others left it behind, then left */
    }
    if (seats > 1 && behind > QS_SHARE_CATCH_UP_FRAMES &&
        now_us - caught_up_us >= QS_SHARE_CATCH_UP_GAP_US) {
        /* Old frames would only show the past; a keyframe lets it start
         * again. */
        return QS_SHARE_CATCH_UP;
    }
    if (lost || (seats > 1 && behind > QS_SHARE_CATCH_UP_FRAMES)) {
        /* A viewer this slow would cost every other one keyframes. */
        return QS_SHARE_GO_SOLO;
    }
    return QS_SHARE_KEEP;
}

QsShareMove qs_share_move(guint seats, gboolean other, uint32_t bitrate, int tier_class,
                          guint read_div, guint tier_read_div)
{
    if (seats == 1) {
        return other ? QS_SHARE_JOIN : QS_SHARE_FOLLOW;
    }
    /* In a tier at another frame rate it could keep up only by taking
     * every frame, and its flushes would be frames of every seat's stream. */
    if (qs_share_outside_class(bitrate, tier_class) || read_div != tier_read_div) {
        return QS_SHARE_LEAVE;
    }
    return QS_SHARE_STAY;
}

const QsShareRules qs_share_rules = {
    .rate_class = qs_share_rate_class,
    .tier_rate = qs_share_tier_rate,
    .lag = qs_share_lag,
    .move = qs_share_move,
};
