/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What waits for a display listener's thread: counted as qemu's calls arrive, read by the watchdog. */
#pragma once

#include <gio/gio.h>
#include <stdint.h>

#define QS_LISTENER_PATH "/org/qemu/Display1/Listener"
#define QS_IFACE_LISTENER "org.qemu.Display1.Listener"
#define QS_IFACE_LISTENER_MAP "org.qemu.Display1.Listener.Unix.Map"

/*
 * A filter on GDBus's worker thread counts the bytes of each call to our
 * Listener as it arrives; the handler on the listener's thread uncounts
 * it. The watchdog reads the count from the main thread, and may arm a
 * wake that the next arrival makes ready, so it can sleep while qemu sends
 * nothing. Reference-counted: GDBus may run the filter after it is removed
 * and the listener freed, so the filter holds a reference of its own.
 */
typedef struct QsListenerArrivals QsListenerArrivals;

/* `wake` (may be NULL; referenced) is made ready by an arrival while armed. */
QsListenerArrivals *qs_listener_arrivals_new(GSource *wake);
void qs_listener_arrivals_unref(QsListenerArrivals *a);
/* Counts what arrives on `conn` from now on; returns the filter's id. */
guint qs_listener_arrivals_watch(QsListenerArrivals *a, GDBusConnection *conn);
/* Called first by every handler: the call is no longer waiting. */
void qs_listener_arrivals_handled(QsListenerArrivals *a, GDBusMethodInvocation *inv);
/* Bytes read from qemu and not yet taken by a handler. */
uint64_t qs_listener_arrivals_get_queued(QsListenerArrivals *a);
/*
 * Whether GDBus's reader catches up with qemu: the watchdog's samples of
 * the socket alone cannot tell: a reader that keeps up but is busy most
 * of the time finds bytes in transit at many checks in a row
 * (display/qs-watchdog.h). So while probing, each arrival looks at the
 * socket right after its message was read, when a reader that keeps up
 * has nothing left to read. The probe costs one ioctl per message, so it
 * runs only while the watchdog has seen bytes wait, and stops at the
 * first empty socket. take_emptied() says whether one was seen since the
 * last call, and clears it.
 */
void qs_listener_arrivals_probe_emptying(QsListenerArrivals *a);
gboolean qs_listener_arrivals_take_emptied(QsListenerArrivals *a);

#ifdef QS_TEST_CONTROLS
/* Test control: GDBus's reader sleeps `ms` after each counted message for
 * the next `seconds`, so it reads slower than qemu writes. */
void qs_listener_arrivals_slow_reader(QsListenerArrivals *a, unsigned ms, unsigned seconds);
#endif
/* The next arrival makes the wake ready (once); set before the caller
 * looks at the backlog, so that an arrival in between is not missed. */
void qs_listener_arrivals_arm(QsListenerArrivals *a);
void qs_listener_arrivals_disarm(QsListenerArrivals *a);
