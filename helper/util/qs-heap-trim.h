/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Giving freed heap back to the system once a burst of work is over. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Delay from the last request to the trim: the encoder's worker frees its
 * last buffers after the session that used them has gone. */
#define QS_HEAP_TRIM_DELAY_MS 1000u

/*
 * Asks for one malloc_trim() on the default main context
 * QS_HEAP_TRIM_DELAY_MS after the last call. glibc keeps what a client
 * session freed (encoder buffers, messages, in the main arena and the
 * worker threads' arenas) resident for the next one; an idle helper
 * should not carry it (docs/performance.md, "Scale"). One timer, not a periodic one:
 * nothing wakes an idle helper.
 */
void qs_heap_trim_soon(void);

/* How many trims have run (tests). */
guint qs_heap_trim_count(void);
/* When the pending trim is due (monotonic microseconds), -1 if none
 * (tests). */
gint64 qs_heap_trim_due_us(void);

G_END_DECLS
