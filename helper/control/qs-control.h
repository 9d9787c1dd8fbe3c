/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsControl: the launcher's door into a running helper, a private D-Bus
 * interface (org.qemuspice.Helper1) on a listening socket the launcher owns. */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define QS_CONTROL_INTERFACE "org.qemuspice.Helper1"
#define QS_CONTROL_PATH "/org/qemuspice/Helper1"
/* The well-known name on the VM's bus in bus mode. */
#define QS_CONTROL_BUS_NAME "org.qemuspice.Helper1"
/* Peers at once; more are refused at accept. */
#define QS_CONTROL_MAX_PEERS 4

/* What the control surface asks of the rest of the helper (main.c wires it).
 * Each runs in the main context and returns FALSE with `error` set to
 * refuse; the caller answers the D-Bus call with that error. */
typedef struct {
    /* A new ticket (`password` NUL-free, `expiry_us` wall clock or 0 for
     * never); `disconnect` ends the current client session. *kept: how
     * many connected clients stay connected. */
    gboolean (*set_ticket)(const char *password, gsize len, gint64 expiry_us,
                           gboolean disconnect, guint *kept, gpointer data,
                           GError **error);
    /* A new view-only ticket; len 0 removes it. */
    gboolean (*set_view_ticket)(const char *password, gsize len, gint64 expiry_us,
                                gpointer data, GError **error);
    /* New token keys (a key file's text). */
    gboolean (*set_token_keys)(const char *text, gsize len, gpointer data,
                               GError **error);
    /* A connected client socket `fd` (taken in all cases) served as if
     * accepted on the plain (`tls` FALSE) or TLS listener; `skip_auth`:
     * it links without a credential, with control rights. */
    gboolean (*add_client)(int fd, gboolean skip_auth, gboolean tls, gpointer data,
                           GError **error);
    /* Ends the session of the client linked from `address`; an error
     * (G_IO_ERROR_NOT_FOUND) when none is. */
    gboolean (*disconnect_client)(const char *address, gpointer data, GError **error);
    /* New TLS credentials from PEM text. */
    gboolean (*set_certificates)(const guint8 *cert, gsize cert_len,
                                 const guint8 *key, gsize key_len,
                                 gpointer data, GError **error);
    /* The connected clients as "aa{sv}" (address s, since x, tls b,
     * rights s, channels as); a floating or full reference. */
    GVariant *(*list_clients)(gpointer data);
} QsControlOps;

typedef struct QsControl QsControl;

/* Serves the interface on every connection accepted from the listening
 * Unix socket `listen_fd` (taken over; -1: none, for the bus only). Peers
 * must run as root or as this process's uid (checked with SO_PEERCRED at
 * accept, again after the helper changed uid). */
QsControl *qs_control_new(int listen_fd, const QsControlOps *ops,
                          gpointer data, GError **error);
/* Also serves it on the VM's bus under QS_CONTROL_BUS_NAME. No per-caller
 * check there: libvirt's per-VM bus admits only its owner's uid, which the
 * helper runs as in bus mode (a peer the private socket admits too). A
 * name already taken is logged, not fatal. */
gboolean qs_control_serve_on_bus(QsControl *control, GDBusConnection *bus,
                                 GError **error);
/* Emits Leaving(reason) to every peer (and on the bus) and gives them up to 200 ms to read
 * it (the main loop is no longer running here). */
void qs_control_leaving(QsControl *control, const char *reason);
void qs_control_free(QsControl *control);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsControl, qs_control_free)

G_END_DECLS
