/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The link stage's budgets that belong to the server, not to one pending
 * connection: log lines per window, the per-source link rate, and the
 * unauthenticated connections counted per source and in all. */

#include "net/qs-server-private.h"

#include <string.h>

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

void qs_link_limits_enter(QsServer *s, const char *source)
{
    guint n = GPOINTER_TO_UINT(g_hash_table_lookup(s->per_source, source));

    g_hash_table_insert(s->per_source, g_strdup(source), GUINT_TO_POINTER(n + 1));
}

void qs_link_limits_leave(QsServer *s, const char *source)
{
    guint n = GPOINTER_TO_UINT(g_hash_table_lookup(s->per_source, source));

    if (n <= 1) {
        g_hash_table_remove(s->per_source, source);
    } else {
        g_hash_table_insert(s->per_source, g_strdup(source), GUINT_TO_POINTER(n - 1));
    }
}

static gpointer oldest_from(QsServer *s, const char *source,
                            const char *(*source_of)(gconstpointer pending))
{
    for (GList *l = s->pending.head; l; l = l->next) {
        if (!source || strcmp(source_of(l->data), source) == 0) {
            return l->data;
        }
    }
    return NULL;
}

/* The oldest goes, so a flood of idle connections cannot lock out a client
 * that links promptly. */
gpointer qs_link_limits_victim(QsServer *s, const char *source,
                               const char *(*source_of)(gconstpointer pending))
{
    guint n = GPOINTER_TO_UINT(g_hash_table_lookup(s->per_source, source));
    gpointer victim = NULL;

    if (n >= s->max_pending_per_source) {
        victim = oldest_from(s, source, source_of);
    } else if (s->pending.length >= s->max_pending) {
        victim = oldest_from(s, NULL, source_of);
    }
    if (victim && s->evictions++ % 100 == 0) {
        g_message("too many unauthenticated connections: dropping the "
                  "oldest (%" G_GUINT64_FORMAT " so far)", s->evictions);
    }
    return victim;
}
