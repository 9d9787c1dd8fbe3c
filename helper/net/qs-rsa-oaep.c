/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-link RSA-1024 keys and RSA-OAEP-SHA1 ticket decryption built on
 * nettle's blinded raw RSA (nettle 3.8 has no OAEP of its own). */

#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <gio/gio.h>
#include <nettle/bignum.h>
#include <nettle/rsa.h>
#include <nettle/asn1.h>
#include <nettle/sha1.h>
#include "net/qs-rsa-oaep.h"

struct QsRsaKey {
    struct rsa_public_key pub;
    struct rsa_private_key priv;
};

void qs_random_bytes(guint8 *buf, gsize len)
{
    while (len > 0) {
        ssize_t n = getrandom(buf, len, 0);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            /* Without randomness no key and no blinding is safe. */
            g_error("getrandom failed: %s", g_strerror(errno));
        }
        buf += n;
        len -= (gsize)n;
    }
}

static void nettle_random(void *ctx, size_t len, uint8_t *dst)
{
    (void)ctx;
    qs_random_bytes(dst, len);
}

QsRsaKey *qs_rsa_key_generate(GError **error)
{
    QsRsaKey *key = g_new0(QsRsaKey, 1);

    rsa_public_key_init(&key->pub);
    rsa_private_key_init(&key->priv);
    mpz_set_ui(key->pub.e, 65537);
    /* e_size 0: keep the e set above. */
    if (!rsa_generate_keypair(&key->pub, &key->priv, NULL, nettle_random,
                              NULL, NULL, QS_RSA_BITS, 0) ||
        mpz_sizeinbase(key->pub.n, 2) != QS_RSA_BITS) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "RSA key generation failed");
        qs_rsa_key_free(key);
        return NULL;
    }
    return key;
}

QsRsaKey *qs_rsa_key_import_der(const guint8 *der, gsize len, GError **error)
{
    QsRsaKey *key = g_new0(QsRsaKey, 1);

    rsa_public_key_init(&key->pub);
    rsa_private_key_init(&key->priv);
    if (!rsa_keypair_from_der(&key->pub, &key->priv, QS_RSA_BITS, len, der) ||
        mpz_sizeinbase(key->pub.n, 2) != QS_RSA_BITS) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "not a DER RSA-%d private key", QS_RSA_BITS);
        qs_rsa_key_free(key);
        return NULL;
    }
    return key;
}

void qs_rsa_key_free(QsRsaKey *key)
{
    if (!key) {
        return;
    }
    rsa_public_key_clear(&key->pub);
    rsa_private_key_clear(&key->priv);
    g_free(key);
}

/* DER SubjectPublicKeyInfo of an RSA key with a 1024-bit modulus (top bit
 * set, so a leading zero byte) and e = 65537: the fixed part before the
 * modulus. */
static const guint8 spki_prefix[] = {
    0x30, 0x81, 0x9f,                               /* SEQUENCE, 159 */
    0x30, 0x0d,                                     /* SEQUENCE, 13 */
    0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01,
    0x05, 0x00,                                     /* rsaEncryption, NULL */
    0x03, 0x81, 0x8d, 0x00,                         /* BIT STRING, 141 */
    0x30, 0x81, 0x89,                               /* SEQUENCE, 137 */
    0x02, 0x81, 0x81, 0x00,                         /* INTEGER n, 129 */
};
static const guint8 spki_suffix[] = {
    0x02, 0x03, 0x01, 0x00, 0x01,                   /* INTEGER e = 65537 */
};
G_STATIC_ASSERT(sizeof(spki_prefix) + QS_RSA_BYTES + sizeof(spki_suffix) ==
                QS_RSA_SPKI_BYTES);

void qs_rsa_key_export_spki(const QsRsaKey *key, guint8 out[QS_RSA_SPKI_BYTES])
{
    memcpy(out, spki_prefix, sizeof(spki_prefix));
    nettle_mpz_get_str_256(QS_RSA_BYTES, out + sizeof(spki_prefix),
                           key->pub.n);
    memcpy(out + sizeof(spki_prefix) + QS_RSA_BYTES, spki_suffix,
           sizeof(spki_suffix));
}

/* MGF1 with SHA-1: XORs the mask generated from `seed` into `buf`. */
static void mgf1_sha1_xor(guint8 *buf, gsize len, const guint8 *seed,
                          gsize seed_len)
{
    guint8 digest[SHA1_DIGEST_SIZE];

    for (guint32 counter = 0; len > 0; counter++) {
        struct sha1_ctx ctx;
        guint8 c[4] = {
            counter >> 24, (counter >> 16) & 0xff, (counter >> 8) & 0xff,
            counter & 0xff,
        };
        gsize n = MIN(len, (gsize)SHA1_DIGEST_SIZE);

        sha1_init(&ctx);
        sha1_update(&ctx, seed_len, seed);
        sha1_update(&ctx, 4, c);
        sha1_digest(&ctx, SHA1_DIGEST_SIZE, digest);
        for (gsize i = 0; i < n; i++) {
            buf[i] ^= digest[i];
        }
        buf += n;
        len -= n;
    }
}

/* 0xff.. if x == 0, else 0, without branches. */
static guint32 ct_is_zero(guint32 x)
{
    return (guint32)0 - (((x | ((guint32)0 - x)) >> 31) ^ 1);
}

gboolean qs_oaep_sha1_decode(const guint8 *em, gsize k,
                             guint8 *out, gsize out_size, gsize *out_len)
{
    const gsize h = SHA1_DIGEST_SIZE;
    guint8 seed[SHA1_DIGEST_SIZE];
    guint8 lhash[SHA1_DIGEST_SIZE];
    guint8 db[512];
    gsize db_len;
    struct sha1_ctx ctx;
    guint32 bad, found = 0, index = 0;
    gsize msg_len;

    /* k is public (the key size), so these checks leak nothing. */
    if (k < 2 * h + 2 || k - h - 1 > sizeof(db)) {
        return FALSE;
    }
    db_len = k - h - 1;
    memcpy(seed, em + 1, h);
    memcpy(db, em + 1 + h, db_len);
    mgf1_sha1_xor(seed, h, db, db_len);
    mgf1_sha1_xor(db, db_len, seed, h);

    sha1_init(&ctx);
    sha1_digest(&ctx, h, lhash); /* SHA-1 of the empty label */

    bad = em[0];
    for (gsize i = 0; i < h; i++) {
        bad |= db[i] ^ lhash[i];
    }
    /* Find the 0x01 separator after the zero padding, looking at every
     * byte whatever is found, so timing does not reveal where it is. */
    for (gsize i = h; i < db_len; i++) {
        guint32 is_one = ct_is_zero(db[i] ^ 1u);
        guint32 is_zero = ct_is_zero(db[i]);
        guint32 take = ~found & is_one;

        index |= take & (guint32)i;
        found |= is_one;
        /* A non-zero, non-one byte before the separator is bad padding. */
        bad |= ~found & ~is_zero & ~is_one & 1u;
    }
    bad |= ~found & 1u;
    msg_len = db_len - 1 - (gsize)index;
    /* Only a decision on the whole block leaves this point. */
    if (bad != 0) {
        memset(db, 0, sizeof(db));
        return FALSE;
    }
    if (msg_len > out_size) {
        memset(db, 0, sizeof(db));
        return FALSE;
    }
    memcpy(out, db + index + 1, msg_len);
    *out_len = msg_len;
    memset(db, 0, sizeof(db));
    memset(seed, 0, sizeof(seed));
    return TRUE;
}

gboolean qs_rsa_oaep_decrypt(const QsRsaKey *key,
                             const guint8 ciphertext[QS_RSA_BYTES],
                             guint8 *out, gsize out_size, gsize *out_len)
{
    guint8 em[QS_RSA_BYTES];
    mpz_t c, m;
    gboolean ok = FALSE;

    mpz_init(c);
    mpz_init(m);
    nettle_mpz_set_str_256_u(c, QS_RSA_BYTES, ciphertext);
    /* rsa_compute_root_tr blinds the exponentiation with fresh randomness
     * and verifies the result against the public key. */
    if (mpz_cmp(c, key->pub.n) < 0 &&
        rsa_compute_root_tr(&key->pub, &key->priv, NULL, nettle_random,
                            m, c)) {
        nettle_mpz_get_str_256(QS_RSA_BYTES, em, m);
        ok = qs_oaep_sha1_decode(em, QS_RSA_BYTES, out, out_size, out_len);
        memset(em, 0, sizeof(em));
    }
    mpz_clear(c);
    mpz_clear(m);
    return ok;
}

gboolean qs_rsa_oaep_decrypt_ticket(const QsRsaKey *key,
                                    const guint8 ciphertext[QS_RSA_BYTES],
                                    guint8 *out, gsize out_size, gsize *out_len)
{
    guint8 shifted[QS_RSA_BYTES];

    if (qs_rsa_oaep_decrypt(key, ciphertext, out, out_size, out_len)) {
        return TRUE;
    }
    if (ciphertext[QS_RSA_BYTES - 1] != 0) {
        return FALSE;
    }
    shifted[0] = 0;
    memcpy(shifted + 1, ciphertext, QS_RSA_BYTES - 1);
    return qs_rsa_oaep_decrypt(key, shifted, out, out_size, out_len);
}
