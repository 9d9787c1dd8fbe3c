/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where in its byte stream a sender ran dry: which delivery spans measured it, not the link. */
#pragma once

#include <glib.h>
#include <stdint.h>

/*
 * A sender that ran dry after writing byte M left the link waiting before
 * byte M + 1, so a delivery span that contains that gap ([first, last)
 * bytes with first <= M < last) measured the sender. A span whose bytes
 * were all written before it did not: they were queued, and drained at the
 * link's pace (BBR marks its samples the same way, per packet). Keeping
 * only the last mark and calling every span that started before it
 * limited also threw away the samples that end a burst, where the link
 * held a full queue; a burst shorter than startup's ramp then left the
 * estimate without one sample of the link (unit test
 * /flow/plan/over-share, 10 Mbit/s).
 *
 * Marks are kept in a ring of QS_IDLE_MARKS; a span reaching back past a
 * mark the ring dropped counts as limited, which errs the old way.
 */

#define QS_IDLE_MARKS 16

typedef struct {
    uint64_t mark[QS_IDLE_MARKS];   /* ascending from the oldest */
    unsigned head, len;             /* head: the oldest */
    gboolean dropped;
    uint64_t dropped_upto;          /* the newest mark the ring dropped */
} QsIdleMarks;

/* The sender ran dry with `bytes` written (a stream counter: it only
 * grows). */
void qs_idle_marks_add(QsIdleMarks *m, uint64_t bytes);

/* The span of bytes (first, last] read, i.e. bytes first + 1 to last,
 * contains a gap: some mark M with first <= M < last. */
gboolean qs_idle_marks_span_limited(const QsIdleMarks *m, uint64_t first, uint64_t last);

/* A new byte stream (counters restarted): no mark holds any more. */
void qs_idle_marks_clear(QsIdleMarks *m);
