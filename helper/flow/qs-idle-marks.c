/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where in its byte stream a sender ran dry: which delivery spans measured it, not the link. */
#include "flow/qs-idle-marks.h"

void qs_idle_marks_add(QsIdleMarks *m, uint64_t bytes)
{
    if (m->len) {
        uint64_t newest = m->mark[(m->head + m->len - 1) % QS_IDLE_MARKS];

        /* Idle again with nothing written since: the same gap. A counter
         * going back is a new stream the caller did not clear for. */
        if (bytes == newest) {
            return;
        }
        if (bytes < newest) {
            qs_idle_marks_clear(m);
        }
    }
    if (m->len == QS_IDLE_MARKS) {
        m->dropped = TRUE;
        m->dropped_upto = m->mark[m->head];
        m->head = (m->head + 1) % QS_IDLE_MARKS;
        m->len--;
    }
    m->mark[(m->head + m->len) % QS_IDLE_MARKS] = bytes;
    m->len++;
}

gboolean qs_idle_marks_span_limited(const QsIdleMarks *m, uint64_t first, uint64_t last)
{
    if (m->dropped && m->dropped_upto >= first) {
        return TRUE;
    }
    for (unsigned i = 0; i < m->len; i++) {
        uint64_t mark = m->mark[(m->head + i) % QS_IDLE_MARKS];

        if (mark >= first && mark < last) {
            return TRUE;
        }
    }
    return FALSE;
}

void qs_idle_marks_clear(QsIdleMarks *m)
{
    *m = (QsIdleMarks){ 0 };
}
