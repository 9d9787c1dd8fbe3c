/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The TLS module (qemu-spice-tls.so): gnutls credentials and sessions. */

#include <gio/gio.h>
#include <gnutls/gnutls.h>
#include "net/qs-tls-module.h"

/* Only TLS 1.2 and 1.3, otherwise the library's (system's) defaults. */
#define QS_TLS_PRIORITY "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

struct QsTlsCreds {
    gint ref;
    gnutls_certificate_credentials_t cred;
    gnutls_priority_t prio;
};

struct QsTlsSession {
    gnutls_session_t tls;
};

static void creds_unref(QsTlsCreds *creds);

/* The part both loaders share: key pair set by `set_keys`, then priorities. */
static QsTlsCreds *creds_new(GError **error)
{
    QsTlsCreds *c = g_new0(QsTlsCreds, 1);
    int rc;

    c->ref = 1;
    rc = gnutls_certificate_allocate_credentials(&c->cred);
    if (rc < 0) {
        g_free(c);
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "TLS credentials: %s", gnutls_strerror(rc));
        return NULL;
    }
    rc = gnutls_priority_init(&c->prio, QS_TLS_PRIORITY, NULL);
    if (rc < 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "TLS priority: %s", gnutls_strerror(rc));
        creds_unref(c);
        return NULL;
    }
    return c;
}

static QsTlsCreds *creds_new_from_pem(const guint8 *cert, gsize cert_len,
                                      const guint8 *key, gsize key_len,
                                      GError **error)
{
    gnutls_datum_t c_d = { (unsigned char *)cert, (unsigned int)cert_len };
    gnutls_datum_t k_d = { (unsigned char *)key, (unsigned int)key_len };
    QsTlsCreds *c;
    int rc;

    if (cert_len == 0 || key_len == 0 || cert_len > QS_TLS_PEM_MAX ||
        key_len > QS_TLS_PEM_MAX) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "certificate and key must each be 1 to %u bytes of PEM",
                    QS_TLS_PEM_MAX);
        return NULL;
    }
    if (!(c = creds_new(error))) {
        return NULL;
    }
    rc = gnutls_certificate_set_x509_key_mem(c->cred, &c_d, &k_d,
                                             GNUTLS_X509_FMT_PEM);
    if (rc < 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "the certificate / key pair: %s", gnutls_strerror(rc));
        creds_unref(c);
        return NULL;
    }
    return c;
}

static QsTlsCreds *creds_load(const char *dir, GError **error)
{
    g_autofree char *ca = g_build_filename(dir, "ca-cert.pem", NULL);
    g_autofree char *cert = g_build_filename(dir, "server-cert.pem", NULL);
    g_autofree char *key = g_build_filename(dir, "server-key.pem", NULL);
    QsTlsCreds *c = creds_new(error);
    int rc;

    if (!c) {
        return NULL;
    }
    rc = gnutls_certificate_set_x509_key_file(c->cred, cert, key,
                                              GNUTLS_X509_FMT_PEM);
    if (rc < 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "loading %s / %s: %s", cert, key, gnutls_strerror(rc));
        creds_unref(c);
        return NULL;
    }
    if (g_file_test(ca, G_FILE_TEST_EXISTS)) {
        rc = gnutls_certificate_set_x509_trust_file(c->cred, ca,
                                                    GNUTLS_X509_FMT_PEM);
        if (rc < 0) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                        "loading %s: %s", ca, gnutls_strerror(rc));
            creds_unref(c);
            return NULL;
        }
    }
    return c;
}

static QsTlsCreds *creds_ref(QsTlsCreds *creds)
{
    g_atomic_int_inc(&creds->ref);
    return creds;
}

static void creds_unref(QsTlsCreds *creds)
{
    if (creds && g_atomic_int_dec_and_test(&creds->ref)) {
        if (creds->prio) {
            gnutls_priority_deinit(creds->prio);
        }
        gnutls_certificate_free_credentials(creds->cred);
        g_free(creds);
    }
}

static QsTlsSession *session_new(QsTlsCreds *creds, int fd, GError **error)
{
    gnutls_session_t s = NULL;
    QsTlsSession *session;
    /* NO_SIGNAL: a vanished client must not SIGPIPE the helper. */
    int rc = gnutls_init(&s, GNUTLS_SERVER | GNUTLS_NONBLOCK |
                                 GNUTLS_NO_SIGNAL);

    if (rc >= 0) {
        rc = gnutls_priority_set(s, creds->prio);
    }
    if (rc >= 0) {
        rc = gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, creds->cred);
    }
    if (rc < 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "TLS session: %s", gnutls_strerror(rc));
        if (s) {
            gnutls_deinit(s);
        }
        return NULL;
    }
    gnutls_certificate_server_set_request(s, GNUTLS_CERT_IGNORE);
    gnutls_transport_set_int(s, fd);
    session = g_new0(QsTlsSession, 1);
    session->tls = s;
    return session;
}

static void session_free(QsTlsSession *session)
{
    if (session) {
        gnutls_deinit(session->tls);
        g_free(session);
    }
}

static int handshake(QsTlsSession *session, gboolean *want_write, GError **error)
{
    int rc = gnutls_handshake(session->tls);

    *want_write = FALSE;
    if (rc == GNUTLS_E_SUCCESS) {
        return 1;
    }
    if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED ||
        rc == GNUTLS_E_WARNING_ALERT_RECEIVED) {
        *want_write = gnutls_record_get_direction(session->tls) == 1;
        return 0;
    }
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "TLS handshake: %s",
                gnutls_strerror(rc));
    return -1;
}

/* A record call's result in the stream layer's terms: bytes, 0 for the
 * peer's close, -2 to wait, -1 with the error set. */
static gssize record_result(ssize_t n, GError **error)
{
    if (n >= 0) {
        return n;
    }
    if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED) {
        return -2;
    }
    if (n == GNUTLS_E_PREMATURE_TERMINATION) {
        return 0;
    }
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "TLS: %s",
                gnutls_strerror((int)n));
    return -1;
}

static gssize session_recv(QsTlsSession *session, void *buf, gsize len,
                           GError **error)
{
    return record_result(gnutls_record_recv(session->tls, buf, len), error);
}

static gssize session_send(QsTlsSession *session, const void *buf, gsize len,
                           GError **error)
{
    return record_result(gnutls_record_send(session->tls, buf, len), error);
}

static gboolean session_pending(QsTlsSession *session)
{
    return gnutls_record_check_pending(session->tls) > 0;
}

__attribute__((visibility("default")))
const QsTlsModuleOps qs_tls_module_ops = {
    .abi = QS_TLS_MODULE_ABI,
    .creds_load = creds_load,
    .creds_new_from_pem = creds_new_from_pem,
    .creds_ref = creds_ref,
    .creds_unref = creds_unref,
    .session_new = session_new,
    .session_free = session_free,
    .handshake = handshake,
    .recv = session_recv,
    .send = session_send,
    .pending = session_pending,
};
