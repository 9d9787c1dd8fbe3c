/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The server certificate's subject for a .vv file's host-subject: read with
 * gnutls, in the certificate's order (spice-gtk compares its own parse of
 * the string with the certificate's name entry by entry, so RFC 4514's
 * reversed order would not match a subject of more than one entry). */

#include <string.h>
#include <gio/gio.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include "qs-launch-cert.h"

#define MAX_CERT_FILE (256 * 1024)

char *qs_cert_subject(const char *path, GError **error)
{
    g_autofree char *pem = NULL;
    gsize len = 0;
    gnutls_x509_crt_t crt = NULL;
    gnutls_datum_t data, dn = { NULL, 0 };
    char *subject = NULL;
    int rc;

    if (!g_file_get_contents(path, &pem, &len, error)) {
        return NULL;
    }
    if (len > MAX_CERT_FILE) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "%s: over %d bytes: not a certificate", path, MAX_CERT_FILE);
        return NULL;
    }
    data = (gnutls_datum_t){ (unsigned char *)pem, (unsigned int)len };
    if ((rc = gnutls_x509_crt_init(&crt)) < 0 ||
        (rc = gnutls_x509_crt_import(crt, &data, GNUTLS_X509_FMT_PEM)) < 0 ||
        (rc = gnutls_x509_crt_get_dn3(crt, &dn, GNUTLS_X509_DN_FLAG_COMPAT)) < 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "%s: no certificate subject: %s", path, gnutls_strerror(rc));
    } else if (memchr(dn.data, '\0', dn.size)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "%s: a NUL byte in the certificate subject", path);
    } else {
        subject = g_strndup((const char *)dn.data, dn.size);
        /* An unescaped '+' joins two attributes into one RDN. */
        for (const char *p = subject; *p; p++) {
            if (*p == '\\' && p[1]) {
                p++;
            } else if (*p == '+') {
                g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                            "%s: the subject '%s' has a multi-valued name, which a "
                            "viewer's host-subject cannot name", path, subject);
                g_clear_pointer(&subject, g_free);
                break;
            }
        }
    }
    gnutls_free(dn.data);
    if (crt) {
        gnutls_x509_crt_deinit(crt);
    }
    return subject;
}
