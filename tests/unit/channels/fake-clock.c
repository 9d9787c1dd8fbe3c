/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A display clock that moves only when the test says (QsDisplayClock), and its timers. */
#include "fake-peers.h"

/* A timer on the fake clock: ready once the clock reached `due`; one that
 * goes on (the ping timer) is due again `interval` later. */
typedef struct {
    GSource base;
    FakeClock *clock;
    int64_t due, interval;
} FakeTimeout;

static gboolean timeout_prepare(GSource *source, gint *timeout)
{
    FakeTimeout *t = (FakeTimeout *)source;

    *timeout = -1;              /* never by the real clock */
    return t->clock->now_us >= t->due;
}

static gboolean timeout_check(GSource *source)
{
    FakeTimeout *t = (FakeTimeout *)source;

    return t->clock->now_us >= t->due;
}

static gboolean timeout_dispatch(GSource *source, GSourceFunc callback, gpointer data)
{
    FakeTimeout *t = (FakeTimeout *)source;

    if (!callback || !callback(data)) {
        return G_SOURCE_REMOVE;
    }
    t->due += MAX(t->interval, 1);
    return G_SOURCE_CONTINUE;
}

static GSourceFuncs timeout_funcs = {
    .prepare = timeout_prepare,
    .check = timeout_check,
    .dispatch = timeout_dispatch,
};

static int64_t clock_now(gpointer data)
{
    return ((FakeClock *)data)->now_us;
}

static GSource *clock_timeout(guint ms, gpointer data)
{
    FakeTimeout *t = (FakeTimeout *)g_source_new(&timeout_funcs, sizeof(FakeTimeout));

    t->clock = data;
    t->interval = (int64_t)ms * 1000;
    t->due = t->clock->now_us + t->interval;
    return &t->base;
}

void fake_clock_init(FakeClock *clock)
{
    /* Any start will do; the real clock's keeps stamps plausible. */
    clock->now_us = g_get_monotonic_time();
    clock->clock = (QsDisplayClock){ clock_now, clock_timeout, clock };
}
