/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Decides when a listener has fallen so far behind that it must be dropped. */
#pragma once

#include <glib.h>
#include <stdint.h>

/*
 * qemu sends Scanout/Update without waiting for replies, and GDBus reads them
 * off the socket as fast as it can, so a listener thread that stops handling
 * them only lets a queue grow (in our process, or in qemu's once our reader
 * stops too). Dropping the listener connection frees both queues at once; a
 * new listener then gets a fresh Scanout, so nothing is lost but time.
 *
 * QS_WATCHDOG_STALL_US = 300 ms: a healthy listener handles each message in
 * a few ms (one compare of a full frame), so 300 ms without progress while
 * messages wait is a stall, not a slow frame, even on a loaded host; and it
 * must be short because qemu keeps producing meanwhile: a 1280x800 guest
 * flushing whole frames sends ~120 MB/s. Measured with a 10 s stall on qemu
 * 7.2 (virtio-gpu, full-frame flushes): qemu's RSS peaked +28 MiB at 300 ms,
 * +52 MiB at 500 ms, +316 MiB with no watchdog.
 * QS_WATCHDOG_MAX_BACKLOG = 16 MiB, or three full frames if that is more: a
 * queue of several whole frames is not a burst, and at 120 MB/s it is
 * reached in ~150 ms, before the stall rule fires.
 * QS_WATCHDOG_BEHIND_US = 1 s: a listener that progresses but whose socket
 * never empties reads slower than qemu writes, and qemu's queue, which we
 * cannot see, grows. A healthy socket empties between messages. The
 * checks' own samples are not enough to say it never did: at 90 % busy a
 * reader that keeps up would show bytes in transit at ten checks in a
 * row a third of the time (0.9^10, were the samples independent), and
 * on a loaded host (two cores, the sanitizer suites beside) the busy
 * guest's listener on qemu 7.2 was dropped so (one fresh-clone CI run;
 * one of three runs of the throttled-client fault test beside sanitizer
 * integration tests). So the socket also counts as emptied when GDBus's
 * reader found it empty right after reading a message (`emptied`,
 * display/qs-listener-arrivals.h).
 * The main thread checks every QS_WATCHDOG_PERIOD_MS while qemu sends.
 * When a check finds nothing waiting and nothing handled since the one
 * before, the next check is at the first message's arrival (the listener's
 * filter wakes it from GDBus's reader thread) or after QS_WATCHDOG_IDLE_MS:
 * an idle guest's helper then sleeps instead of waking 10 times a second.
 * The slow check only matters if GDBus's reader itself stops (bytes then
 * stay unread and no filter runs), which nothing we know of does; so it is
 * rare (5 s): on a virtual CPU each wakeup costs 0.2-0.6 ms, and at 1 s
 * these checks were half of an idle helper's CPU (docs/performance.md
 * "Scale").
 */
#define QS_WATCHDOG_STALL_US (300 * 1000)
#define QS_WATCHDOG_MAX_BACKLOG ((uint64_t)16 * 1024 * 1024)
#define QS_WATCHDOG_BEHIND_US (1000 * 1000)
#define QS_WATCHDOG_PERIOD_MS 100
#define QS_WATCHDOG_IDLE_MS 5000

typedef struct {
    int64_t stall_us;
    uint64_t max_backlog;
    /* state */
    uint64_t seen_progress;
    int64_t waiting_since_us;   /* -1: nothing waiting */
    int64_t unread_since_us;    /* -1: the socket was empty at the last check */
} QsWatchdog;

typedef enum {
    QS_WATCHDOG_OK,
    QS_WATCHDOG_STALLED,    /* data waits and nothing was handled for stall_us */
    QS_WATCHDOG_BACKLOG,    /* more than max_backlog bytes wait */
    QS_WATCHDOG_BEHIND,     /* the socket never emptied for BEHIND_US */
} QsWatchdogVerdict;

void qs_watchdog_init(QsWatchdog *wd, int64_t stall_us, uint64_t max_backlog);

/* `progress` counts the messages the listener has handled (any increase is
 * progress); what waits for it is `queued` (read, in our process) plus
 * `unread` (still in the socket); `emptied`: the socket was seen empty
 * since the last check. */
QsWatchdogVerdict qs_watchdog_check(QsWatchdog *wd, int64_t now_us,
                                    uint64_t progress, uint64_t queued,
                                    uint64_t unread, gboolean emptied);

const char *qs_watchdog_verdict_str(QsWatchdogVerdict v);
