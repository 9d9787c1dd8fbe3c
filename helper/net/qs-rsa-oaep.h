/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The per-link RSA-1024 ticket key: generation, SubjectPublicKeyInfo DER
 * export and RSA-OAEP (SHA-1, MGF1-SHA-1, empty label) decryption. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define QS_RSA_BITS 1024
#define QS_RSA_BYTES (QS_RSA_BITS / 8)
#define QS_RSA_SPKI_BYTES 162 /* SPICE_TICKET_PUBKEY_BYTES */

typedef struct QsRsaKey QsRsaKey;

/* A fresh key with e = 65537 from the kernel's random source. Takes a few
 * milliseconds to tens of milliseconds: do it off the main thread. */
QsRsaKey *qs_rsa_key_generate(GError **error);
void qs_rsa_key_free(QsRsaKey *key);

/* A key from a DER PKCS#1 RSAPrivateKey of exactly QS_RSA_BITS bits: for
 * fixed test vectors (links always use fresh keys). */
QsRsaKey *qs_rsa_key_import_der(const guint8 *der, gsize len, GError **error);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsRsaKey, qs_rsa_key_free)

/* The public key as the 162-byte DER SubjectPublicKeyInfo. */
void qs_rsa_key_export_spki(const QsRsaKey *key, guint8 out[QS_RSA_SPKI_BYTES]);

/* RSA-OAEP-SHA1 decryption of a 128-byte ciphertext. On success writes the
 * message (at most QS_RSA_BYTES - 42 bytes) to `out` and its length to
 * *out_len. All padding failures give the same FALSE result, decided after
 * the whole block was examined. */
gboolean qs_rsa_oaep_decrypt(const QsRsaKey *key,
                             const guint8 ciphertext[QS_RSA_BYTES],
                             guint8 *out, gsize out_size, gsize *out_len);

/* The SPICE ticket: qs_rsa_oaep_decrypt(), and when that fails and the
 * last byte is 0, once more with the block moved one byte right.
 * spice-html5 (ticket.js, rsa_encrypt) writes the ciphertext through
 * toString(16), which drops a leading zero byte: one ticket in 256 arrives
 * as 127 bytes at the start of the 128-byte field. The second try reads
 * what that client meant and nothing else. */
gboolean qs_rsa_oaep_decrypt_ticket(const QsRsaKey *key,
                                    const guint8 ciphertext[QS_RSA_BYTES],
                                    guint8 *out, gsize out_size, gsize *out_len);

/* OAEP-SHA1 decoding of an already RSA-decrypted block `em` (k bytes), the
 * part that does not need the key; exposed for tests and fuzzing. */
gboolean qs_oaep_sha1_decode(const guint8 *em, gsize k,
                             guint8 *out, gsize out_size, gsize *out_len);

/* Fills `buf` from getrandom(2); aborts on failure (no safe fallback). */
void qs_random_bytes(guint8 *buf, gsize len);

G_END_DECLS
