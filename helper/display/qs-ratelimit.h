/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Rate limit for log lines that a peer can trigger at will. */
#pragma once

#include <glib.h>
#include <stdint.h>

#define QS_RATELIMIT_BURST 5
#define QS_RATELIMIT_WINDOW_US (10 * G_USEC_PER_SEC)

/* One per thread or per object; not thread-safe. */
typedef struct {
    int64_t window_start_us;
    unsigned count;
    unsigned suppressed;
} QsRateLimit;

/* TRUE if a line may be logged now; *ret_suppressed then says how many were
 * dropped since the last allowed one. */
static inline gboolean qs_ratelimit_allow(QsRateLimit *rl, int64_t now_us,
                                          unsigned *ret_suppressed)
{
    if (rl->count == 0 || now_us - rl->window_start_us >= QS_RATELIMIT_WINDOW_US) {
        rl->window_start_us = now_us;
        rl->count = 0;
    }
    if (rl->count >= QS_RATELIMIT_BURST) {
        rl->suppressed++;
        return FALSE;
    }
    rl->count++;
    *ret_suppressed = rl->suppressed;
    rl->suppressed = 0;
    return TRUE;
}
