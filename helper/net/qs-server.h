/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsServer: the listening sockets and the link stage; hands linked,
 * authenticated QsConn objects to the channel layer. */
#pragma once

#include <glib.h>
#include "net/qs-conn.h"
#include "net/qs-net-config.h"

G_BEGIN_DECLS

/* Room for the server's channel caps in a link reply. */
#define QS_SERVER_MAX_CHANNEL_CAPS 4

typedef struct {
    /* Consulted once the client's SpiceLinkMess is parsed, before the reply
     * and before authentication (info->session_id is 0 here). Return
     * SPICE_LINK_ERR_OK and fill the server's channel caps for
     * info->channel_type (*n_caps words, at most
     * QS_SERVER_MAX_CHANNEL_CAPS), or refuse, typically with
     * SPICE_LINK_ERR_CHANNEL_NOT_AVAILABLE. Net itself answers
     * INVALID_MAGIC / VERSION_MISMATCH / INVALID_DATA / NEED_SECURED and
     * sets the common caps (AUTH_SELECTION, AUTH_SPICE, MINI_HEADER). */
    SpiceLinkErr (*prepare)(const QsLinkInfo *info, guint32 *caps,
                            guint *n_caps, gpointer user_data);
    /* Consulted after the ticket was verified, just before the link result
     * is sent: accept a new main channel (connection_id 0) and assign a
     * session id, accept another channel only for the current session's
     * id, or refuse (SPICE_LINK_ERR_BAD_CONNECTION_ID, ...). On OK
     * *session_id becomes QsLinkInfo.session_id and `attach` follows
     * immediately, in the same main-loop iteration. */
    SpiceLinkErr (*authorize)(const QsLinkInfo *info, guint32 *session_id,
                              gpointer user_data);
    /* A new connection; the reference is transferred to the callee, which
     * sets its handlers before returning and unrefs it once done (after
     * the closed handler at the latest). */
    void (*attach)(QsConn *conn, gpointer user_data);
} QsServerCallbacks;

typedef struct QsServer QsServer;

/* Binds/adopts the listeners of `cfg` (validated) and starts accepting in
 * the thread-default GMainContext, where every callback then runs; all
 * QsServer and QsConn calls belong to that thread. `cfg` is copied where
 * needed; the ticket is referenced. cfg->ticket NULL without
 * cfg->disable_ticketing is an error. Every link checks the ticket (and its
 * expiry), sub-channels included, as spice-server does. */
QsServer *qs_server_new(const QsNetConfig *cfg,
                        const QsServerCallbacks *callbacks,
                        gpointer user_data, GError **error);
void qs_server_free(QsServer *server);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsServer, qs_server_free)

/* Re-reads the x509 files of --tls-dir (main.c calls it on SIGHUP); on
 * failure the old credentials stay in use. Handshakes already running keep
 * the credentials they started with. */
gboolean qs_server_reload_tls(QsServer *server, GError **error);

/* Replaces the credentials with a PEM certificate chain and key from
 * memory; on failure the old ones stay. An error without a TLS listener. */
gboolean qs_server_set_tls_pem(QsServer *server, const guint8 *cert,
                               gsize cert_len, const guint8 *key,
                               gsize key_len, GError **error);

/* Replaces the fixed ticket (NULL: none; tokens, if any, still work); a
 * ticket turns authentication on if it was disabled. Established
 * connections are not affected, new links are checked against it. */
void qs_server_set_ticket(QsServer *server, QsTicket *ticket);
/* The fixed ticket in force, or NULL. */
const QsTicket *qs_server_get_ticket(QsServer *server);
/* Does a link need a credential (a ticket or a token)? */
gboolean qs_server_auth_enabled(QsServer *server);
const QsTicket *qs_server_get_view_ticket(QsServer *server);
/* New token keys (a key file's text) for a server started with some. */
gboolean qs_server_set_token_keys(QsServer *server, const char *text, gsize len,
                                  GError **error);
/* Replaces the view-only ticket (NULL: none): a client that shows it links
 * with QsLinkInfo.view_only set. Established connections are not affected. */
void qs_server_set_view_ticket(QsServer *server, QsTicket *ticket);

/* A connected client socket handed in (org.qemuspice.Helper1's AddClient,
 * for virDomainOpenGraphicsFD): taken in all cases, it goes through the
 * link stage as if accepted on the plain (`tls` FALSE) or TLS listener,
 * under the same limits of unauthenticated connections (all such sockets
 * counted as one source). `skip_auth`: no credential is asked, the link
 * gets control rights. Returns the peer's name as clients are listed
 * ("ADDRESS:PORT", or "local:N" for a Unix socket, N counting the sockets
 * added), or NULL: G_IO_ERROR_NOT_SUPPORTED for TLS without a TLS
 * listener, G_IO_ERROR_INVALID_ARGUMENT for a descriptor that is not a
 * connected stream socket. */
char *qs_server_add_client(QsServer *server, int fd, gboolean skip_auth, gboolean tls,
                           GError **error);

/* The bound port of a listener (useful with port 0), 0 if none. */
guint16 qs_server_get_port(QsServer *server, gboolean tls);

/* Unauthenticated connections currently held (for tests and stats). */
guint qs_server_get_pending_count(QsServer *server);
/* Links refused by the per-source link rate limit. */
guint64 qs_server_get_rate_limited_count(QsServer *server);

G_END_DECLS
