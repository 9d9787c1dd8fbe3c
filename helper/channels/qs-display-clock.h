/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsDisplayClock: the time and the timers a display channel's pump runs on. */
#pragma once

#include <glib.h>
#include <stdint.h>

/*
 * Production has none (NULL): g_get_monotonic_time() and GLib timeouts.
 * A unit test hands one in (QsChannelsConfig.display_clock) so that it
 * moves time itself and counts what the plan did, instead of sleeping
 * and hoping the machine kept up.
 */
typedef struct {
    int64_t (*now)(gpointer data);                  /* microseconds */
    /* A source that fires once, `ms` from now on this clock. */
    GSource *(*timeout_source)(guint ms, gpointer data);
    gpointer data;
} QsDisplayClock;

static inline int64_t qs_display_clock_now(const QsDisplayClock *clock)
{
    return clock ? clock->now(clock->data) : g_get_monotonic_time();
}

static inline GSource *qs_display_clock_timeout(const QsDisplayClock *clock, guint ms)
{
    return clock ? clock->timeout_source(ms, clock->data) : g_timeout_source_new(ms);
}
