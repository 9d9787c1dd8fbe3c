/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One served qemu console: its proxies, its listener, the lag watchdog. */
#pragma once

#include <gio/gio.h>
#include <stdint.h>

#include "display/qs-cursor.h"
#include "display/qs-input.h"
#include "screen/qs-screen.h"

typedef struct QsConsole QsConsole;

typedef struct {
    uint64_t registrations;     /* RegisterListener calls made */
    uint64_t watchdog_resets;
    uint64_t listener_losses;   /* listener connections qemu closed */
    uint64_t scanouts, updates, scanout_maps, update_maps, dropped, early;
    uint64_t backlog;           /* bytes waiting now */
} QsConsoleStats;

/* Startup only (synchronous proxy creation). Does not register yet. */
QsConsole *qs_console_new(GDBusConnection *conn, const char *dest,
                          uint32_t id, GError **error);
/* Retires and joins every listener thread, then frees. */
void qs_console_free(QsConsole *console);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsConsole, qs_console_free)

/* Registers a listener (asynchronously) and starts the watchdog. */
void qs_console_start(QsConsole *console);
/* qemu is going away: stop registering, ignore listener events. */
void qs_console_stop(QsConsole *console);
/* The console object vanished from qemu / came back. */
void qs_console_vanished(QsConsole *console);
void qs_console_appeared(QsConsole *console);

uint32_t qs_console_get_id(QsConsole *console);
QsScreen *qs_console_get_screen(QsConsole *console);
QsCursor *qs_console_get_cursor(QsConsole *console);
QsInput *qs_console_get_input(QsConsole *console);
/* qemu's Width/Height properties (0 before the first surface). */
void qs_console_get_size(QsConsole *console, uint32_t *width, uint32_t *height);
void qs_console_get_stats(QsConsole *console, QsConsoleStats *stats);

#ifdef QS_TEST_CONTROLS
void qs_console_set_watchdog(QsConsole *console, gboolean enabled);
gboolean qs_console_stall_listener(QsConsole *console, unsigned seconds);
gboolean qs_console_slow_reader(QsConsole *console, unsigned ms, unsigned seconds);
#endif
