/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-source token buckets for link attempts, in a bounded table, on a
 * clock the caller passes in (so tests can use a fake one). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct QsRateLimit QsRateLimit;

/* `rate` attempts per second per source, up to `burst` at once (both >= 1);
 * at most `max_sources` sources are remembered. */
QsRateLimit *qs_rate_limit_new(guint rate, guint burst, guint max_sources);
void qs_rate_limit_free(QsRateLimit *rl);

/* Charges one attempt from `source` at `now_us` (monotonic microseconds);
 * FALSE if its bucket is empty (the attempt is refused, nothing charged). */
gboolean qs_rate_limit_take(QsRateLimit *rl, const char *source,
                            gint64 now_us);
/* Gives back the attempt of a link that completed: clients that link
 * promptly do not use up their own budget. */
void qs_rate_limit_refund(QsRateLimit *rl, const char *source, gint64 now_us);

guint qs_rate_limit_get_n_sources(QsRateLimit *rl);

G_END_DECLS
