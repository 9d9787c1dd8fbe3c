/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Server TLS: x509 credentials (qemu's spice layout) and non-blocking
 * sessions. gnutls lives in a module loaded on first use (qs-tls.c), so a
 * helper without TLS neither maps nor initialises it. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct QsTlsCreds QsTlsCreds;
typedef struct QsTlsSession QsTlsSession;

/* Loads the TLS module (once; later calls return the first answer). The
 * credential loaders below call it, so only a caller that wants the
 * failure early needs to. */
gboolean qs_tls_load(GError **error);

/* Loads DIR/server-cert.pem and DIR/server-key.pem (required) and
 * DIR/ca-cert.pem (optional: the chain's CA, sent to no one, used only if
 * client certificates are ever requested). */
QsTlsCreds *qs_tls_creds_load(const char *dir, GError **error);

/* A certificate chain and key given as PEM text (the control surface's
 * ReloadCertificates: a confined helper opens no files), each at most
 * 256 KiB (the module refuses more). */
QsTlsCreds *qs_tls_creds_new_from_pem(const guint8 *cert, gsize cert_len,
                                      const guint8 *key, gsize key_len,
                                      GError **error);
QsTlsCreds *qs_tls_creds_ref(QsTlsCreds *creds);
void qs_tls_creds_unref(QsTlsCreds *creds);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsTlsCreds, qs_tls_creds_unref)

/* A server session on `fd`, TLS 1.2 and 1.3 only, no client certificate
 * requested. The session keeps no reference: the caller keeps `creds`
 * alive as long as the session. */
QsTlsSession *qs_tls_session_new(QsTlsCreds *creds, int fd, GError **error);
void qs_tls_session_free(QsTlsSession *session);

/* 1: done; 0: would block, *want_write says which way; -1: error (set). */
int qs_tls_session_handshake(QsTlsSession *session, gboolean *want_write,
                             GError **error);
/* > 0: bytes; 0: the peer closed; -1: error (set); -2: would block. */
gssize qs_tls_session_recv(QsTlsSession *session, void *buf, gsize len,
                           GError **error);
/* Bytes written, -1 on error (set) or -2 if it would block (call again
 * with the same data). */
gssize qs_tls_session_send(QsTlsSession *session, const void *buf, gsize len,
                           GError **error);
/* TRUE if decrypted data waits that poll() will not announce. */
gboolean qs_tls_session_pending(QsTlsSession *session);

G_END_DECLS
