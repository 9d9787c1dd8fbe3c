/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The door to qemu's clipboard (org.qemu.Display1.Clipboard): register as its peer, grab, release, request. */
#pragma once

#include <gio/gio.h>
#include <stdint.h>

/*
 * qemu's D-Bus clipboard (ui/dbus-clipboard.c, qemu-dbus-display.md §2)
 * knows one type, "text/plain;charset=utf-8", and selections 0..2. Both
 * sides implement the interface: we call qemu's /org/qemu/Display1/Clipboard
 * and export our own at the same path, which qemu calls (Grab, Release,
 * Request, and Register to reset serials). Nothing here blocks.
 */
#define QS_CLIPBOARD_MIME_TEXT "text/plain;charset=utf-8"
#define QS_CLIPBOARD_SELECTIONS 3u
/* Largest text taken from qemu or given to it. */
#define QS_CLIPBOARD_MAX (16u * 1024 * 1024)
/* How long qemu's Request waits for our answer (qemu's main loop is blocked
 * meanwhile: it calls synchronously), and ours for qemu's. */
#define QS_CLIPBOARD_REQUEST_TIMEOUT_MS 3000
#define QS_CLIPBOARD_CALL_TIMEOUT_MS 5000

typedef struct QsClipboard QsClipboard;

/* Main context; what qemu did. */
typedef struct {
    /* Registered with qemu (TRUE) or registration failed / lost. */
    void (*available)(gboolean available, gpointer user_data);
    /* qemu's clipboard owns `selection` with text / lost it. */
    void (*grab)(uint8_t selection, gpointer user_data);
    void (*release)(uint8_t selection, gpointer user_data);
    /* qemu wants the text we grabbed: answer with qs_clipboard_provide. */
    void (*request)(uint8_t selection, gpointer user_data);
    /* The answer to qs_clipboard_fetch: the text, or NULL. */
    void (*data)(uint8_t selection, GBytes *text, gpointer user_data);
} QsClipboardFuncs;

/* `dest`: qemu's bus name, NULL on a peer-to-peer connection. */
QsClipboard *qs_clipboard_new(GDBusConnection *conn, const char *dest);
void qs_clipboard_free(QsClipboard *clipboard);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsClipboard, qs_clipboard_free)

void qs_clipboard_set_funcs(QsClipboard *clipboard, const QsClipboardFuncs *funcs,
                            gpointer user_data);
/* Exports our peer object and registers it, asynchronously (qemu calls
 * our object back before it replies). */
void qs_clipboard_start(QsClipboard *clipboard);
gboolean qs_clipboard_is_available(QsClipboard *clipboard);

/* We own `selection` with text (the SPICE client copied). */
void qs_clipboard_grab(QsClipboard *clipboard, uint8_t selection);
void qs_clipboard_release(QsClipboard *clipboard, uint8_t selection);
/* Asks qemu for its text; the `data` func answers, always. */
void qs_clipboard_fetch(QsClipboard *clipboard, uint8_t selection);
/* Answers qemu's pending request of `selection` (data NULL: none). */
void qs_clipboard_provide(QsClipboard *clipboard, uint8_t selection,
                          const uint8_t *data, size_t size);
