/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One registered org.qemu.Display1.Listener, served on its own thread. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "display/qs-console-sink.h"

typedef struct QsListener QsListener;

typedef enum {
    QS_LISTENER_READY,      /* handshake done, Listener exported */
    QS_LISTENER_FAILED,     /* the handshake failed */
    QS_LISTENER_CLOSED,     /* qemu closed the listener connection */
} QsListenerEvent;

/* Runs in the main context; `id` is the listener's id (stale ids happen:
 * compare with the current listener's). */
typedef void (*QsListenerEventFunc)(uint64_t id, QsListenerEvent event,
                                    const char *message, gpointer user_data);

typedef struct {
    uint64_t scanouts, updates, scanout_maps, update_maps;
    uint64_t dropped;               /* calls refused as invalid */
    uint64_t early;                 /* updates that raced qemu's resize
                                     * across its two connections: beyond
                                     * the surface before the resize reached
                                     * us, or of the old map after it */
} QsListenerStats;

/* Starts the thread, which begins the D-Bus handshake (as the
 * authentication client) on `fd` at once; takes `fd` in all cases.
 * `wake` (may be NULL; referenced) is made ready when a message arrives
 * while armed, see qs_listener_arm_wake(). */
QsListener *qs_listener_start(QsConsoleSink *sink, uint64_t id, int fd,
                              GMainContext *main_ctx, GSource *wake,
                              QsListenerEventFunc func, gpointer user_data,
                              GError **error);

uint64_t qs_listener_get_id(QsListener *l);
/* Messages handled so far (the watchdog's "progress"). */
uint64_t qs_listener_get_progress(QsListener *l);
/* Bytes waiting: read and queued to the thread, and unread in the socket. */
void qs_listener_get_backlog(QsListener *l, uint64_t *queued, uint64_t *unread);
/* Main thread: look for the socket emptied after a message arrives, until
 * it is (display/qs-listener-arrivals.h); take_emptied() says whether it
 * was since its last call. */
void qs_listener_probe_emptying(QsListener *l);
gboolean qs_listener_take_emptied(QsListener *l);
/* Main thread: the next message qemu sends makes `wake` ready at once
 * (g_source_set_ready_time(wake, 0), from GDBus's worker thread), once.
 * FALSE, and not armed, if bytes wait already. Lets the watchdog sleep
 * while nothing is sent. */
gboolean qs_listener_arm_wake(QsListener *l);
void qs_listener_disarm_wake(QsListener *l);
/* Main thread, once qemu has gone quiet: drop our page-table entries for
 * qemu's shared surface (qemu 9.2+), so that an idle helper's RSS does not
 * count qemu's framebuffer; the next update faults in what it reads. */
void qs_listener_trim(QsListener *l);
void qs_listener_get_stats(QsListener *l, QsListenerStats *stats);

/* Main thread: cut the connection now (qemu frees its queue), tell the
 * thread to finish. The listener no longer writes to the sink. */
void qs_listener_retire(QsListener *l);
gboolean qs_listener_finished(QsListener *l);
/* Waits for the thread and frees; the listener must be retired. */
void qs_listener_free(QsListener *l);

#ifdef QS_TEST_CONTROLS
/* Test control: block the listener thread for `seconds`. */
void qs_listener_stall(QsListener *l, unsigned seconds);
/* Test control: qs_listener_arrivals_slow_reader(). */
void qs_listener_slow_reader(QsListener *l, unsigned ms, unsigned seconds);
#endif
