/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Attaching to qemu's D-Bus display and following it until it goes away. */
#pragma once

#include <gio/gio.h>

#include "display/qs-console.h"
#include "display/qs-qemu-chardev.h"

typedef struct {
    int p2p_fd;                 /* --dbus-p2p-fd, or -1 */
    const char *dbus_address;   /* --dbus-address, or NULL */
    const char *vm;             /* --vm: name or UUID, bus mode only */
    const char *qmp_path;       /* --qmp, or NULL */
    int console;                /* --console, or -1: every graphic console */
    int timeout_ms;             /* bound for each startup call */
} QsDisplayOptions;

typedef struct QsDisplay QsDisplay;

/* What qemu's D-Bus audio (-audiodev dbus) can give us, as found at
 * attach time. */
typedef enum {
    QS_DISPLAY_AUDIO_NONE,          /* no /org/qemu/Display1/Audio */
    QS_DISPLAY_AUDIO_P2P_UNSAFE,    /* there, but qemu < 8.1 on p2p: registering
                                     * crashes qemu 7.x */
    QS_DISPLAY_AUDIO_YES,
} QsDisplayAudio;
/* Served consoles are SPICE display channels 0..n-1: a u8 id, and the
 * channel layer's per-head change flags fit one word. */
#define QS_DISPLAY_MAX_SERVED 16

/* Main context; called once, when qemu has gone (connection closed, owner
 * left the bus). `reason` is one log-ready sentence. */
typedef void (*QsDisplayGoneFunc)(QsDisplay *display, const char *reason,
                                  gpointer user_data);

/* Connects, discovers VM and consoles, picks the consoles to serve (every
 * graphic one, or only --console) and creates their proxies. Synchronous
 * (nothing is registered yet); errors are one line. */
QsDisplay *qs_display_attach(const QsDisplayOptions *opts, GError **error);
/* Registers the listener(s); from here on nothing blocks. */
void qs_display_start(QsDisplay *display, QsDisplayGoneFunc func,
                      gpointer user_data);
/* Whether any client is connected: on a p2p connection, how often qemu is
 * asked whether it still serves us (see qs-display.c); an arrival asks at
 * once. */
void qs_display_set_watched(QsDisplay *display, gboolean watched);
void qs_display_free(QsDisplay *display);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsDisplay, qs_display_free)

const char *qs_display_get_vm_name(QsDisplay *display);
/* qemu's -uuid as text, or NULL if the VM object has none. */
const char *qs_display_get_vm_uuid(QsDisplay *display);
/* The first served console (keyboard, agent monitors config). */
QsConsole *qs_display_get_console(QsDisplay *display);
/* The served consoles in console order: index = SPICE display channel id. */
guint qs_display_get_n_consoles(QsDisplay *display);
QsConsole *qs_display_get_console_at(QsDisplay *display, guint index);
/* The D-Bus connection to qemu and qemu's name on it (NULL on a
 * peer-to-peer connection), for the other doors to qemu (clipboard). */
GDBusConnection *qs_display_get_connection(QsDisplay *display);
const char *qs_display_get_dest(QsDisplay *display);
QsDisplayAudio qs_display_get_audio(QsDisplay *display);
/* qemu's -chardev dbus chardevs as found at attach (at most 64), ordered
 * by object path (chardev id, numbers by value); the display owns them.
 * Chardevs added later are not seen. */
guint qs_display_get_n_chardevs(QsDisplay *display);
QsQemuChardev *qs_display_get_chardev_at(QsDisplay *display, guint index);
