/* SPDX-License-Identifier: GPL-2.0-or-later */
/* RSA-OAEP-SHA1 ticket decryption against OpenSSL-made ciphertexts, fixed
 * vectors and crafted bad paddings; the SPKI export as OpenSSL reads it. */

#include <string.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <nettle/sha1.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include "net/qs-rsa-oaep.h"

static QsRsaKey *shared_key;

static EVP_PKEY *openssl_pub(const QsRsaKey *key)
{
    guint8 spki[QS_RSA_SPKI_BYTES];
    const unsigned char *p = spki;

    qs_rsa_key_export_spki(key, spki);
    return d2i_PUBKEY(NULL, &p, sizeof(spki));
}

static gsize openssl_encrypt(const QsRsaKey *key, const void *msg, gsize len,
                             guint8 out[QS_RSA_BYTES])
{
    EVP_PKEY *pk = openssl_pub(key);
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(pk, NULL);
    size_t outlen = QS_RSA_BYTES;

    g_assert_nonnull(ctx);
    g_assert_cmpint(EVP_PKEY_encrypt_init(ctx), ==, 1);
    /* spice-gtk's call: OAEP with OpenSSL's defaults, SHA-1 and MGF1-SHA-1. */
    g_assert_cmpint(EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING),
                    ==, 1);
    g_assert_cmpint(EVP_PKEY_encrypt(ctx, out, &outlen, msg, len), ==, 1);
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(pk);
    return outlen;
}

static void test_spki(void)
{
    guint8 spki[QS_RSA_SPKI_BYTES];
    unsigned char *der = NULL;
    EVP_PKEY *pk;
    BIGNUM *e = NULL;
    int len;

    qs_rsa_key_export_spki(shared_key, spki);
    pk = openssl_pub(shared_key);
    g_assert_nonnull(pk);
    g_assert_cmpint(EVP_PKEY_get_base_id(pk), ==, EVP_PKEY_RSA);
    g_assert_cmpint(EVP_PKEY_get_bits(pk), ==, 1024);
    g_assert_cmpint(EVP_PKEY_get_bn_param(pk, "e", &e), ==, 1);
    g_assert_cmpuint(BN_get_word(e), ==, 65537);
    /* OpenSSL re-encodes it to the same bytes (our DER is canonical). */
    len = i2d_PUBKEY(pk, &der);
    g_assert_cmpmem(der, len, spki, sizeof(spki));
    OPENSSL_free(der);
    BN_free(e);
    EVP_PKEY_free(pk);
}

static void test_fresh_keys_differ(void)
{
    g_autoptr(QsRsaKey) other = qs_rsa_key_generate(NULL);
    guint8 a[QS_RSA_SPKI_BYTES], b[QS_RSA_SPKI_BYTES];

    qs_rsa_key_export_spki(shared_key, a);
    qs_rsa_key_export_spki(other, b);
    g_assert_true(memcmp(a, b, sizeof(a)) != 0);
}

static void test_libcrypto_roundtrip(void)
{
    static const char *const msgs[] = { "secret", "", "p@ss w0rd!" };

    for (guint i = 0; i < G_N_ELEMENTS(msgs); i++) {
        guint8 ct[QS_RSA_BYTES], out[QS_RSA_BYTES];
        gsize len = 0;

        /* With the NUL, as spice-gtk sends it. */
        openssl_encrypt(shared_key, msgs[i], strlen(msgs[i]) + 1, ct);
        g_assert_true(qs_rsa_oaep_decrypt(shared_key, ct, out, sizeof(out),
                                          &len));
        g_assert_cmpmem(out, len, msgs[i], strlen(msgs[i]) + 1);
    }
    /* The largest message OAEP-SHA1 carries in 128 bytes: 86. */
    {
        guint8 msg[86], ct[QS_RSA_BYTES], out[QS_RSA_BYTES];
        gsize len = 0;

        memset(msg, 0xa5, sizeof(msg));
        openssl_encrypt(shared_key, msg, sizeof(msg), ct);
        g_assert_true(qs_rsa_oaep_decrypt(shared_key, ct, out, sizeof(out),
                                          &len));
        g_assert_cmpmem(out, len, msg, sizeof(msg));
        /* A too-small output buffer is a failure, not an overflow. */
        g_assert_false(qs_rsa_oaep_decrypt(shared_key, ct, out, 85, &len));
    }
}

/* spice-html5's ticket when its ciphertext begins with a zero byte: the 127
 * other bytes at the start of the field, a zero after them. */
static void test_ticket_short_ciphertext(void)
{
    guint8 ct[QS_RSA_BYTES], cut[QS_RSA_BYTES], out[QS_RSA_BYTES];
    gsize len = 0;
    guint tries = 0;

    do {
        openssl_encrypt(shared_key, "secret", 7, ct);
        g_assert_cmpuint(++tries, <, 20000);
    } while (ct[0] != 0);
    memcpy(cut, ct + 1, QS_RSA_BYTES - 1);
    cut[QS_RSA_BYTES - 1] = 0;
    g_assert_false(qs_rsa_oaep_decrypt(shared_key, cut, out, sizeof(out), &len));
    g_assert_true(qs_rsa_oaep_decrypt_ticket(shared_key, cut, out, sizeof(out), &len));
    g_assert_cmpmem(out, len, "secret", 7);
    /* The whole one still decrypts as it is. */
    g_assert_true(qs_rsa_oaep_decrypt_ticket(shared_key, ct, out, sizeof(out), &len));
    g_assert_cmpmem(out, len, "secret", 7);
}

static void test_openssl_cli(void)
{
    g_autofree char *dir = g_dir_make_tmp("qs-oaep-XXXXXX", NULL);
    g_autofree char *pub = g_build_filename(dir, "pub.der", NULL);
    g_autofree char *in = g_build_filename(dir, "in.bin", NULL);
    g_autofree char *out = g_build_filename(dir, "out.bin", NULL);
    guint8 spki[QS_RSA_SPKI_BYTES], plain[QS_RSA_BYTES];
    g_autofree char *ct = NULL;
    gsize ct_len = 0, len = 0;
    gint status = -1;
    const char *argv[] = {
        "openssl", "pkeyutl", "-encrypt", "-pubin", "-keyform", "DER",
        "-inkey", pub, "-pkeyopt", "rsa_padding_mode:oaep", "-in", in,
        "-out", out, NULL,
    };
    g_autoptr(GError) error = NULL;

    g_assert_nonnull(dir);
    qs_rsa_key_export_spki(shared_key, spki);
    g_assert_true(g_file_set_contents(pub, (const char *)spki, sizeof(spki),
                                      NULL));
    g_assert_true(g_file_set_contents(in, "hunter2", 8, NULL));
    if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL,
                      NULL, NULL, NULL, &status, &error)) {
        g_test_skip("openssl command not available");
        return;
    }
    g_assert_true(g_spawn_check_wait_status(status, NULL));
    g_assert_true(g_file_get_contents(out, &ct, &ct_len, NULL));
    g_assert_cmpuint(ct_len, ==, QS_RSA_BYTES);
    g_assert_true(qs_rsa_oaep_decrypt(shared_key, (const guint8 *)ct, plain,
                                      sizeof(plain), &len));
    g_assert_cmpmem(plain, len, "hunter2", 8);
    g_unlink(pub);
    g_unlink(in);
    g_unlink(out);
    g_rmdir(dir);
}

static guint8 *read_data(const char *name, gsize *len)
{
    g_autofree char *path = g_build_filename(QS_TEST_DATA_DIR, name, NULL);
    char *data = NULL;

    g_assert_true(g_file_get_contents(path, &data, len, NULL));
    return (guint8 *)data;
}

static void test_fixed_vectors(void)
{
    static const struct {
        const char *file;
        const char *msg;
        gsize len;
    } good[] = {
        { "oaep-secret.bin", "secret", 7 },
        { "oaep-empty.bin", "", 1 },
        { "oaep-60x.bin",
          "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 61 },
    };
    static const char *const bad[] = {
        "bad-oaep-sha256.bin", "bad-oaep-label.bin", "bad-pkcs1v15.bin",
    };
    gsize der_len;
    g_autofree guint8 *der = read_data("rsa1024-key.der", &der_len);
    g_autoptr(QsRsaKey) key = qs_rsa_key_import_der(der, der_len, NULL);
    gsize pub_len;
    g_autofree guint8 *pub = read_data("rsa1024-pub.der", &pub_len);
    guint8 spki[QS_RSA_SPKI_BYTES];

    g_assert_nonnull(key);
    qs_rsa_key_export_spki(key, spki);
    g_assert_cmpmem(spki, sizeof(spki), pub, pub_len);
    for (guint i = 0; i < G_N_ELEMENTS(good); i++) {
        gsize ct_len, len = 0;
        g_autofree guint8 *ct = read_data(good[i].file, &ct_len);
        guint8 out[QS_RSA_BYTES];

        g_assert_cmpuint(ct_len, ==, QS_RSA_BYTES);
        g_assert_true(qs_rsa_oaep_decrypt(key, ct, out, sizeof(out), &len));
        g_assert_cmpmem(out, len, good[i].msg, good[i].len);
    }
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        gsize ct_len, len = 0;
        g_autofree guint8 *ct = read_data(bad[i], &ct_len);
        guint8 out[QS_RSA_BYTES];

        g_test_message("%s", bad[i]);
        g_assert_false(qs_rsa_oaep_decrypt(key, ct, out, sizeof(out), &len));
    }
}

static void test_ciphertext_out_of_range(void)
{
    guint8 ct[QS_RSA_BYTES], out[QS_RSA_BYTES];
    gsize len;

    memset(ct, 0xff, sizeof(ct)); /* > n */
    g_assert_false(qs_rsa_oaep_decrypt(shared_key, ct, out, sizeof(out), &len));
    memset(ct, 0, sizeof(ct));
    g_assert_false(qs_rsa_oaep_decrypt(shared_key, ct, out, sizeof(out), &len));
}

/* The test's own OAEP encoder (RFC 8017 7.1.1 step 2), to craft blocks with
 * one defect each; `lhash` lets a wrong label hash through. */
static void mgf1(guint8 *buf, gsize len, const guint8 *seed, gsize slen)
{
    for (guint32 c = 0; len > 0; c++) {
        struct sha1_ctx ctx;
        guint8 cnt[4] = { c >> 24, c >> 16, c >> 8, c }, d[20];
        gsize n = MIN(len, 20);

        sha1_init(&ctx);
        sha1_update(&ctx, slen, seed);
        sha1_update(&ctx, 4, cnt);
        sha1_digest(&ctx, 20, d);
        for (gsize i = 0; i < n; i++) {
            buf[i] ^= d[i];
        }
        buf += n;
        len -= n;
    }
}

static void encode(guint8 em[QS_RSA_BYTES], const guint8 *db_in)
{
    guint8 *seed = em + 1, *db = em + 21;

    em[0] = 0;
    for (int i = 0; i < 20; i++) {
        seed[i] = (guint8)g_random_int();
    }
    memcpy(db, db_in, QS_RSA_BYTES - 21);
    mgf1(db, QS_RSA_BYTES - 21, seed, 20);
    mgf1(seed, 20, db, QS_RSA_BYTES - 21);
}

static void make_db(guint8 db[QS_RSA_BYTES - 21], const char *msg)
{
    struct sha1_ctx ctx;
    gsize dblen = QS_RSA_BYTES - 21, mlen = strlen(msg);

    memset(db, 0, dblen);
    sha1_init(&ctx);
    sha1_digest(&ctx, 20, db);
    db[dblen - mlen - 1] = 0x01;
    memcpy(db + dblen - mlen, msg, mlen);
}

static void test_decode_rejections(void)
{
    guint8 db[QS_RSA_BYTES - 21], em[QS_RSA_BYTES], out[QS_RSA_BYTES];
    gsize len;

    make_db(db, "secret");
    encode(em, db);
    g_assert_true(qs_oaep_sha1_decode(em, sizeof(em), out, sizeof(out), &len));
    g_assert_cmpmem(out, len, "secret", 6);

    /* Leading byte not zero. */
    em[0] = 0x01;
    g_assert_false(qs_oaep_sha1_decode(em, sizeof(em), out, sizeof(out), &len));

    /* Wrong label hash. */
    make_db(db, "secret");
    db[3] ^= 0x40;
    encode(em, db);
    g_assert_false(qs_oaep_sha1_decode(em, sizeof(em), out, sizeof(out), &len));

    /* No 0x01 separator at all. */
    make_db(db, "secret");
    memset(db + 20, 0, sizeof(db) - 20);
    encode(em, db);
    g_assert_false(qs_oaep_sha1_decode(em, sizeof(em), out, sizeof(out), &len));

    /* A non-zero byte in the padding before the separator. */
    make_db(db, "secret");
    db[30] = 0x02;
    encode(em, db);
    g_assert_false(qs_oaep_sha1_decode(em, sizeof(em), out, sizeof(out), &len));

    /* Separator right after the label hash: 86-byte message, accepted. */
    memset(db, 0x33, sizeof(db));
    {
        struct sha1_ctx ctx;

        sha1_init(&ctx);
        sha1_digest(&ctx, 20, db);
    }
    db[20] = 0x01;
    encode(em, db);
    g_assert_true(qs_oaep_sha1_decode(em, sizeof(em), out, sizeof(out), &len));
    g_assert_cmpuint(len, ==, 86);

    /* A block too short for OAEP-SHA1. */
    g_assert_false(qs_oaep_sha1_decode(em, 41, out, sizeof(out), &len));
}

int main(int argc, char **argv)
{
    int rc;

    g_test_init(&argc, &argv, NULL);
    shared_key = qs_rsa_key_generate(NULL);
    g_assert_nonnull(shared_key);
    g_test_add_func("/net/oaep/spki", test_spki);
    g_test_add_func("/net/oaep/fresh-keys-differ", test_fresh_keys_differ);
    g_test_add_func("/net/oaep/libcrypto-roundtrip", test_libcrypto_roundtrip);
    g_test_add_func("/net/oaep/ticket-short-ciphertext", test_ticket_short_ciphertext);
    g_test_add_func("/net/oaep/openssl-cli", test_openssl_cli);
    g_test_add_func("/net/oaep/fixed-vectors", test_fixed_vectors);
    g_test_add_func("/net/oaep/out-of-range", test_ciphertext_out_of_range);
    g_test_add_func("/net/oaep/decode-rejections", test_decode_rejections);
    rc = g_test_run();
    qs_rsa_key_free(shared_key);
    return rc;
}
