/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A main-context source that any thread can make ready: how listener threads hand work to the main loop. */
#pragma once

#include <glib.h>

/* Attached to `ctx`; runs `func(data)` once after one or more qs_wake()
 * calls (from any thread; g_source_set_ready_time is thread-safe). `func`
 * returns G_SOURCE_CONTINUE to stay. Free with g_source_destroy and
 * g_source_unref. */
GSource *qs_wake_source_new(const char *name, GSourceFunc func, gpointer data,
                            GMainContext *ctx);

static inline void qs_wake(GSource *source)
{
    g_source_set_ready_time(source, 0);
}
