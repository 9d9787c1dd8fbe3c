/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Attaching to qemu's D-Bus display and following it until it goes away. */
#pragma once

#include <gio/gio.h>

#include "display/qs-console.h"

typedef struct {
    int p2p_fd;                 /* --dbus-p2p-fd, or -1 */
    const char *dbus_address;   /* --dbus-address, or NULL */
    const char *vm;             /* --vm: name or UUID, bus mode only */
    const char *qmp_path;       /* --qmp, or NULL */
    int console;                /* --console, or -1: first graphic console */
    int timeout_ms;             /* bound for each startup call */
} QsDisplayOptions;

typedef struct QsDisplay QsDisplay;

/* Main context; called once, when qemu has gone (connection closed, owner
 * left the bus). `reason` is one log-ready sentence. */
typedef void (*QsDisplayGoneFunc)(QsDisplay *display, const char *reason,
                                  gpointer user_data);

/* Connects, discovers VM and consoles, picks the console and creates its
 * proxies. Synchronous (nothing is registered yet); errors are one line. */
QsDisplay *qs_display_attach(const QsDisplayOptions *opts, GError **error);
/* Registers the listener(s); from here on nothing blocks. */
void qs_display_start(QsDisplay *display, QsDisplayGoneFunc func,
                      gpointer user_data);
void qs_display_free(QsDisplay *display);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsDisplay, qs_display_free)

const char *qs_display_get_vm_name(QsDisplay *display);
/* qemu's -uuid as text, or NULL if the VM object has none. */
const char *qs_display_get_vm_uuid(QsDisplay *display);
/* The served console (one for now). */
QsConsole *qs_display_get_console(QsDisplay *display);
