/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The link stage's budgets that belong to the server, not to one pending
 * connection: log lines per window and the per-source link rate. */

#include "net/qs-server-private.h"

#define LOG_WINDOW_US (10 * G_USEC_PER_SEC)
#define LOG_PER_WINDOW 20

gboolean qs_link_log_allowed(QsServer *s)
{
    gint64 now = g_get_monotonic_time();

    if (now - s->log_window_start > LOG_WINDOW_US) {
        if (s->log_count > LOG_PER_WINDOW) {
            g_message("%u further link refusals not logged",
                      s->log_count - LOG_PER_WINDOW);
        }
        s->log_window_start = now;
        s->log_count = 0;
    }
    return ++s->log_count <= LOG_PER_WINDOW;
}

gboolean qs_link_charge(QsServer *s, const char *source)
{
    if (!s->rate ||
        qs_rate_limit_take(s->rate, source, s->rate_clock())) {
        return TRUE;
    }
    s->rate_refused++;
    if (s->rate_refused % 100 == 1) {
        g_message("link rate limit: refusing links from %s "
                  "(%" G_GUINT64_FORMAT " refused so far)",
                  source, s->rate_refused);
    }
    return FALSE;
}
