/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Server TLS credentials from an x509 directory (qemu's spice layout). */
#pragma once

#include <glib.h>
#include <gnutls/gnutls.h>

G_BEGIN_DECLS

typedef struct QsTlsCreds QsTlsCreds;

/* Loads DIR/server-cert.pem and DIR/server-key.pem (required) and
 * DIR/ca-cert.pem (optional: the chain's CA, sent to no one, used only if
 * client certificates are ever requested). */
QsTlsCreds *qs_tls_creds_load(const char *dir, GError **error);
/* The largest PEM certificate chain or key accepted from memory. */
#define QS_TLS_PEM_MAX (256u * 1024u)

/* A certificate chain and key given as PEM text (the control surface's
 * ReloadCertificates: a confined helper opens no files). */
QsTlsCreds *qs_tls_creds_new_from_pem(const guint8 *cert, gsize cert_len,
                                      const guint8 *key, gsize key_len,
                                      GError **error);
QsTlsCreds *qs_tls_creds_ref(QsTlsCreds *creds);
void qs_tls_creds_unref(QsTlsCreds *creds);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsTlsCreds, qs_tls_creds_unref)

/* A server session on `fd`, TLS 1.2 and 1.3 only, no client certificate
 * requested. The session keeps no reference: the caller keeps `creds`
 * alive as long as the session. */
gnutls_session_t qs_tls_session_new(QsTlsCreds *creds, int fd, GError **error);

G_END_DECLS
