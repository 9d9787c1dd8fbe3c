/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A blocking SPICE link-stage client for the net tests (plain or TLS via
 * OpenSSL), encrypting tickets with libcrypto's OAEP like spice-gtk. */
#pragma once

#include <glib.h>
#include <openssl/ssl.h>

typedef struct {
    int fd;
    SSL_CTX *ctx;
    SSL *ssl;
    gboolean mini;       /* server advertised MINI_HEADER */
    guint32 server_common_caps;
    guint32 server_channel_caps;
    guint8 spki[162];
    guint32 client_common_caps; /* as sent in the link */
    guint64 last_serial;        /* of the last full-header message */
} NetTestClient;

/* Connects to 127.0.0.1:port (TLS if `tls`); 5 s receive timeout. */
NetTestClient *net_test_client_connect(guint16 port, gboolean tls);
/* Plain, from the local address `source` (e.g. "127.0.0.2": all of
 * 127/8 is loopback), so tests can play a second host. */
NetTestClient *net_test_client_connect_from(guint16 port, const char *source);
/* TLS with the client's highest protocol version capped (e.g.
 * TLS1_1_VERSION); NULL if the handshake fails. */
NetTestClient *net_test_client_connect_tls_max(guint16 port, int max_version);
/* On `fd`, a connected stream socket (taken), TLS if `tls`; 5 s timeouts. */
NetTestClient *net_test_client_new_from_fd(int fd, gboolean tls);
void net_test_client_free(NetTestClient *c);

gboolean net_test_client_send(NetTestClient *c, const void *buf, gsize len);
/* Reads exactly len bytes; FALSE on EOF, error or timeout. */
gboolean net_test_client_recv(NetTestClient *c, void *buf, gsize len);
/* TRUE if the server closes the connection within `ms` (reading and
 * discarding anything it sends first). */
gboolean net_test_client_wait_eof(NetTestClient *c, guint ms);

/* Sends SpiceLinkHeader + SpiceLinkMess. */
gboolean net_test_client_send_link(NetTestClient *c, guint32 conn_id,
                                   guint8 type, guint8 id,
                                   guint32 common_caps, guint32 channel_caps);
/* Reads the SpiceLinkReply; returns its error code, or -1 on I/O failure. */
int net_test_client_read_reply(NetTestClient *c);
/* Sends the mechanism (if `selection`) and the OAEP-encrypted
 * password + NUL, reads the u32 result; -1 on I/O failure. */
int net_test_client_auth(NetTestClient *c, gboolean selection,
                         const char *password);
/* Whole link: header, reply, ticket. Returns the final link result (reply
 * error if not OK). */
int net_test_client_link(NetTestClient *c, guint32 conn_id, guint8 type,
                         const char *password);

/* A throw-away TLS directory (server-key.pem, server-cert.pem: a P-256 key
 * and a self-signed certificate for localhost, made by openssl), or NULL if
 * openssl could not make one; net_test_remove_tls_dir() removes it. */
char *net_test_make_tls_dir(void);
void net_test_remove_tls_dir(const char *dir);

/* Messages after the link (mini or full header as negotiated). */
gboolean net_test_client_send_msg(NetTestClient *c, guint16 type,
                                  const void *data, guint32 size);
/* Returns a newly allocated body, NULL on failure. */
guint8 *net_test_client_recv_msg(NetTestClient *c, guint16 *type,
                                 guint32 *size);
