/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The listener lag decision; pure so it can be tested with a fake clock. */

#include "qs-watchdog.h"

void qs_watchdog_init(QsWatchdog *wd, int64_t stall_us, uint64_t max_backlog)
{
    wd->stall_us = stall_us;
    wd->max_backlog = max_backlog;
    wd->seen_progress = 0;
    wd->waiting_since_us = -1;
    wd->unread_since_us = -1;
}

QsWatchdogVerdict qs_watchdog_check(QsWatchdog *wd, int64_t now_us,
                                    uint64_t progress, uint64_t queued,
                                    uint64_t unread, gboolean emptied)
{
    uint64_t backlog_bytes = queued + unread;

    if (unread == 0) {
        wd->unread_since_us = -1;
    } else if (wd->unread_since_us < 0 || emptied) {
        wd->unread_since_us = now_us;
    } else if (now_us - wd->unread_since_us >= QS_WATCHDOG_BEHIND_US) {
        return QS_WATCHDOG_BEHIND;
    }
    if (backlog_bytes > wd->max_backlog) {
        return QS_WATCHDOG_BACKLOG;
    }
    if (backlog_bytes == 0) {
        wd->seen_progress = progress;
        wd->waiting_since_us = -1;
        return QS_WATCHDOG_OK;
    }
    /* Time counts from the later of "data started waiting" and "last
     * progress": an idle listener that just got a message is not late. */
    if (progress != wd->seen_progress || wd->waiting_since_us < 0) {
        wd->seen_progress = progress;
        wd->waiting_since_us = now_us;
        return QS_WATCHDOG_OK;
    }
    if (now_us - wd->waiting_since_us >= wd->stall_us) {
        return QS_WATCHDOG_STALLED;
    }
    return QS_WATCHDOG_OK;
}

const char *qs_watchdog_verdict_str(QsWatchdogVerdict v)
{
    switch (v) {
    case QS_WATCHDOG_OK:
        return "ok";
    case QS_WATCHDOG_STALLED:
        return "stalled";
    case QS_WATCHDOG_BACKLOG:
        return "backlog too large";
    case QS_WATCHDOG_BEHIND:
        return "reads slower than qemu writes";
    }
    return "?";
}
