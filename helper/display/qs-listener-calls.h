/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What qemu's calls to our Listener do, on the listener's thread: frames into the console's sink. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "display/qs-console-sink.h"
#include "display/qs-listener-arrivals.h"
#include "display/qs-ratelimit.h"
#include "display/qs-surface-map.h"
#include "qs-dbus-display1.h"

/*
 * The state qemu's calls change, owned by the listener's thread; the main
 * thread reads only the counters (atomics) and trims the map under the
 * sink's lock. Every write to the sink happens under its lock after a
 * check of `retired`, so a listener that the watchdog replaced can never
 * write after its successor started.
 */
typedef struct {
    QsConsoleSink *sink;
    QsListenerArrivals *arrivals;
    const gint *retired;            /* the listener's, atomic */

    /* atomics, read by the main thread */
    guint64 progress;
    guint64 scanouts, updates, scanout_maps, update_maps, dropped, early;

    QsSurfaceMap map;
    QsRateLimit rl;
} QsListenerCalls;

/* Our handlers on qemu's calls to `skel` and `map_skel`, on `c`. */
void qs_listener_calls_connect(QsListenerCalls *c, QemuDBusDisplay1Listener *skel,
                               QemuDBusDisplay1ListenerUnixMap *map_skel);
