/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The table the TLS module (qemu-spice-tls.so) hands the helper. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The module sits below qs-tls.c, which calls through this table: it
 * names the opaque types qs-tls.h names (C11 allows the same typedef
 * twice) rather than include the API built on it. */
typedef struct QsTlsCreds QsTlsCreds;
typedef struct QsTlsSession QsTlsSession;

/* The largest PEM certificate chain or key accepted from memory. */
#define QS_TLS_PEM_MAX (256u * 1024u)

/* Bumped whenever the table changes: a module from another build is
 * refused by name rather than called wrongly. */
#define QS_TLS_MODULE_ABI 1u
#define QS_TLS_MODULE_FILE "qemu-spice-tls.so"
#define QS_TLS_MODULE_SYMBOL "qs_tls_module_ops"

typedef struct {
    guint abi;
    QsTlsCreds *(*creds_load)(const char *dir, GError **error);
    QsTlsCreds *(*creds_new_from_pem)(const guint8 *cert, gsize cert_len,
                                      const guint8 *key, gsize key_len,
                                      GError **error);
    QsTlsCreds *(*creds_ref)(QsTlsCreds *creds);
    void (*creds_unref)(QsTlsCreds *creds);
    QsTlsSession *(*session_new)(QsTlsCreds *creds, int fd, GError **error);
    void (*session_free)(QsTlsSession *session);
    int (*handshake)(QsTlsSession *session, gboolean *want_write, GError **error);
    gssize (*recv)(QsTlsSession *session, void *buf, gsize len, GError **error);
    gssize (*send)(QsTlsSession *session, const void *buf, gsize len,
                   GError **error);
    gboolean (*pending)(QsTlsSession *session);
} QsTlsModuleOps;

/* The module's one export. */
extern const QsTlsModuleOps qs_tls_module_ops;

G_END_DECLS
