/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsChardev: a byte stream to one of qemu's chardevs over an inherited
 * stream socket, or over sockets an upper layer obtains from qemu on
 * demand (a D-Bus chardev), read only when asked, its write queue
 * byte-accounted. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Bytes read from qemu per data callback: a caller that pauses reading
 * after one callback has at most this much more to take. */
#define QS_CHARDEV_READ_CHUNK (64u * 1024u)

typedef struct QsChardev QsChardev;

/* Called from the main loop (the thread-default context of qs_chardev_new),
 * never from inside qs_chardev_write() or qs_chardev_set_reading(). */
typedef struct {
    /* Bytes from qemu; only while reading is on. */
    void (*data)(QsChardev *cd, const guint8 *data, gsize len, gpointer user_data);
    /* The write queue fell below the low-water mark after having reached it. */
    void (*drained)(QsChardev *cd, gpointer user_data);
    /* qemu connected to the listening socket (a new chardev connection). */
    void (*opened)(QsChardev *cd, gpointer user_data);
    /* The connection to qemu ended (EOF, reset, a write error); what was
     * queued for qemu is dropped. `for_good`: the descriptor was a
     * connected socket, so nothing can reopen it; otherwise the listening
     * socket waits for qemu to connect again. */
    void (*closed)(QsChardev *cd, const char *reason, gboolean for_good,
                   gpointer user_data);
} QsChardevHandlers;

/*
 * Takes `fd`, an inherited stream socket: either connected to qemu's
 * chardev (qemu listens: `-chardev socket,server=on`; libvirt's
 * <source mode='bind'>) or listening for qemu to connect (qemu is the
 * client, `server=off` with reconnect). Anything else (not a socket, a
 * datagram socket, a closed descriptor) is an error naming `name` and the
 * descriptor. The descriptor is made non-blocking and close-on-exec.
 */
QsChardev *qs_chardev_new(const char *name, int fd, GError **error);

/*
 * A chardev whose connections are made on demand by whoever created it
 * (qemu's `-chardev dbus`: a socket pair registered with qemu): it asks
 * for one whenever it has none and is accepting, as a listening socket
 * would take qemu's next connect. Net itself never learns how.
 */
typedef struct {
    /* Make a connection and hand it over with qs_chardev_dialed() or
     * qs_chardev_dial_failed(), now or later from the main loop. Called
     * from the main loop; at most one is outstanding. */
    void (*dial)(QsChardev *cd, gpointer data);
    /* qs_chardev_free(): an outstanding dial's answer must not come;
     * `data` is not used again. */
    void (*release)(gpointer data);
} QsChardevDialer;

QsChardev *qs_chardev_new_dialed(const char *name, const QsChardevDialer *dialer,
                                 gpointer data);
/* The answer to a dial: `fd`, one end of a connected stream socket whose
 * other end qemu's chardev holds (taken in all cases). */
void qs_chardev_dialed(QsChardev *cd, int fd);
/* A dial failed: `reason` is logged (once for a run of failures); the
 * next one comes after a growing pause, up to 5 s, or never if
 * `for_good` (qemu's chardev is gone). */
void qs_chardev_dial_failed(QsChardev *cd, const char *reason, gboolean for_good);

void qs_chardev_free(QsChardev *cd);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsChardev, qs_chardev_free)

void qs_chardev_set_handlers(QsChardev *cd, const QsChardevHandlers *handlers,
                             gpointer user_data);
const char *qs_chardev_get_name(QsChardev *cd);
/* Connected to qemu now. */
gboolean qs_chardev_is_open(QsChardev *cd);
/* A connection can be made again once one ends: the descriptor listens
 * (qemu connects, and may connect again) or the chardev is dialed. */
gboolean qs_chardev_is_listening(QsChardev *cd);

/* Reading from qemu on or off (off at start): off, qemu's writes wait in
 * the socket and, once it is full, in qemu. */
void qs_chardev_set_reading(QsChardev *cd, gboolean reading);

/* Whether a listening descriptor accepts qemu's connection (on at start).
 * Off, qemu's connect waits in the listen backlog: what it writes then
 * is read once accepting is on again. A dialed chardev dials only while
 * accepting; a connection that arrives after accepting went off is
 * closed. */
void qs_chardev_set_accepting(QsChardev *cd, gboolean accepting);
/* Ends the connection to qemu now, as if qemu had closed it (the closed
 * handler runs, `reason` is logged): on a listening descriptor qemu's
 * chardev sees its peer go and may connect again. */
void qs_chardev_disconnect(QsChardev *cd, const char *reason);

/* Queues bytes for qemu. FALSE (nothing queued) while not connected. The
 * caller bounds the queue by pausing its source at its own mark. */
gboolean qs_chardev_write(QsChardev *cd, const guint8 *data, gsize len);
gsize qs_chardev_get_queued(QsChardev *cd);
/* "drained" fires when the queue falls below `low_water` after reaching it. */
void qs_chardev_set_low_water(QsChardev *cd, gsize low_water);

G_END_DECLS
