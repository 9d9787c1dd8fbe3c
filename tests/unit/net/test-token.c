/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Signed console tokens: the format against docs/examples/mint_token.py's
 * vector (an independent implementation), each refusal, the key file and
 * single use. */

#include <string.h>
#include "net/qs-spice-protocol.h"
#include "net/qs-token-verifier.h"

#define VM "6f8e1ad4-2b1c-4f3e-9a7d-0c5b1e2f3a4b"
#define OTHER_VM "0a0b0c0d-2b1c-4f3e-9a7d-0c5b1e2f3a4b"
/* mint_token.py: derive_vm_key(bytes(range(32)), VM) */
#define VM_KEY_HEX "66a5ab5430092c93b26de5ba03fd83c959e548680af967c7460913cbbd48ccc7"
/* mint(.., key_id=1, expiry=2000000000, view_only=True, token_id=01..08) */
#define VECTOR_VIEW "qst.AQEBdzWUAAECAwQFBgcIb44a1EnuZwxUEHQVfnhnBEj-jyk"
/* mint(.., key_id=2, expiry=2000000000, single_use=True, token_id=01..08) */
#define VECTOR_ONCE "qst.AQICdzWUAAECAwQFBgcIb44a1Dj-ngIc2aEAh24WvlUZkDk"
#define NOW 1900000000

static void master_key(guint8 out[32])
{
    for (guint i = 0; i < 32; i++) {
        out[i] = (guint8)i;
    }
}

static void test_vector(void)
{
    guint8 master[32], uuid[16], vm_key[32], want[32];
    QsTokenClaims c = { .key_id = 1, .flags = QS_TOKEN_FLAG_VIEW_ONLY,
                        .expiry_s = 2000000000 };
    char text[QS_TOKEN_TEXT_LEN + 1];

    master_key(master);
    g_assert_true(qs_token_parse_uuid(VM, uuid));
    qs_token_derive_vm_key(master, sizeof(master), uuid, vm_key);
    g_assert_true(qs_token_parse_hex_key(VM_KEY_HEX, want, 32, 32, NULL));
    g_assert_cmpmem(vm_key, 32, want, 32);
    for (guint i = 0; i < 8; i++) {
        c.token_id[i] = (guint8)(i + 1);
    }
    qs_token_mint(vm_key, uuid, &c, text);
    g_assert_cmpstr(text, ==, VECTOR_VIEW);
    c.key_id = 2;
    c.flags = QS_TOKEN_FLAG_SINGLE_USE;
    qs_token_mint(vm_key, uuid, &c, text);
    g_assert_cmpstr(text, ==, VECTOR_ONCE);
    /* It fits SPICE's ticket field. */
    g_assert_cmpuint(strlen(text), <=, SPICE_MAX_PASSWORD_LENGTH);
}

static void test_uuid_and_hex(void)
{
    guint8 u[16], k[64];
    gsize n;

    g_assert_true(qs_token_parse_uuid("6F8E1AD4-2B1C-4F3E-9A7D-0C5B1E2F3A4B", u));
    g_assert_cmphex(u[0], ==, 0x6f);
    g_assert_cmphex(u[15], ==, 0x4b);
    g_assert_false(qs_token_parse_uuid("6f8e1ad42b1c4f3e9a7d0c5b1e2f3a4b", u));
    g_assert_false(qs_token_parse_uuid("6f8e1ad4-2b1c-4f3e-9a7d-0c5b1e2f3a4", u));
    g_assert_false(qs_token_parse_uuid("6f8e1ad4-2b1c-4f3e-9a7d+0c5b1e2f3a4b", u));
    g_assert_false(qs_token_parse_uuid("6f8e1ad4-2b1c-4f3e-9a7d-0c5b1e2f3a4g", u));
    g_assert_true(qs_token_parse_hex_key("00ff", k, 1, 64, &n));
    g_assert_cmpuint(n, ==, 2);
    g_assert_false(qs_token_parse_hex_key("0ff", k, 1, 64, NULL));
    g_assert_false(qs_token_parse_hex_key("zz", k, 1, 64, NULL));
    g_assert_false(qs_token_parse_hex_key("00", k, 2, 64, NULL));
}

/* Encodes 35 raw bytes as a token text (base64url, no padding). */
static char *encode_raw(const guint8 raw[35])
{
    g_autofree char *b64 = g_base64_encode(raw, 35);
    GString *s = g_string_new(QS_TOKEN_PREFIX);

    for (const char *p = b64; *p && *p != '='; p++) {
        g_string_append_c(s, *p == '+' ? '-' : *p == '/' ? '_' : *p);
    }
    return g_string_free(s, FALSE);
}

static void test_decode_form(void)
{
    QsTokenClaims c;
    guint8 body[19], mac[16], raw[35] = { 1, 1, 0 };
    char bad[QS_TOKEN_TEXT_LEN + 1];
    g_autofree char *text = NULL;

#define DECODE(s) qs_token_decode((s), strlen(s), &c, body, mac)
    g_assert_cmpint(DECODE(VECTOR_VIEW), ==, QS_TOKEN_VALID);
    g_assert_cmpuint(c.key_id, ==, 1);
    g_assert_cmpuint(c.flags, ==, QS_TOKEN_FLAG_VIEW_ONLY);
    g_assert_cmpuint(c.expiry_s, ==, 2000000000);
    g_assert_cmpint(DECODE("s3cret"), ==, QS_TOKEN_NOT_A_TOKEN);
    g_assert_cmpint(DECODE("qst"), ==, QS_TOKEN_NOT_A_TOKEN);
    g_assert_cmpint(DECODE("qst.AQEB"), ==, QS_TOKEN_MALFORMED);
    g_assert_cmpint(DECODE(VECTOR_VIEW "A"), ==, QS_TOKEN_MALFORMED);
    strcpy(bad, VECTOR_VIEW);
    bad[10] = '+';            /* base64, not base64url */
    g_assert_cmpint(DECODE(bad), ==, QS_TOKEN_MALFORMED);
    strcpy(bad, VECTOR_VIEW);
    bad[QS_TOKEN_TEXT_LEN - 1] = 'z';   /* 'k' → 'z': padding bits set */
    g_assert_cmpint(DECODE(bad), ==, QS_TOKEN_MALFORMED);
    raw[0] = 2;
    text = encode_raw(raw);
    g_assert_cmpint(DECODE(text), ==, QS_TOKEN_BAD_VERSION);
    g_free(text);
    raw[0] = 1;
    raw[2] = 4;
    text = encode_raw(raw);
    g_assert_cmpint(DECODE(text), ==, QS_TOKEN_BAD_FLAGS);
#undef DECODE
}

static QsTokenVerifier *verifier(const char *extra)
{
    g_autofree char *text = g_strdup_printf("[tokens]\nvm=" VM "\nkey-1=" VM_KEY_HEX
                                            "\nkey-2=" VM_KEY_HEX "\n%s", extra);
    g_autoptr(GError) error = NULL;
    QsTokenVerifier *v = qs_token_verifier_new(text, strlen(text), &error);

    g_assert_no_error(error);
    return v;
}

static void assert_key_file_refused(const char *text, const char *what)
{
    g_autoptr(GError) error = NULL;

    g_assert_null(qs_token_verifier_new(text, strlen(text), &error));
    g_assert_nonnull(error);
    g_assert_nonnull(strstr(error->message, what));
    /* A key never appears in an error. */
    g_assert_null(strstr(error->message, "66a5ab"));
}

static void test_key_file(void)
{
    g_autoptr(QsTokenVerifier) v = verifier("");
    GString *many = g_string_new("[tokens]\nvm=" VM "\n");

    g_assert_cmpuint(qs_token_verifier_n_keys(v), ==, 2);
    assert_key_file_refused("", "no [tokens] group");
    assert_key_file_refused("[tokens]\nkey-1=" VM_KEY_HEX "\n", "vm=");
    assert_key_file_refused("[tokens]\nvm=nope\nkey-1=" VM_KEY_HEX "\n", "vm=");
    assert_key_file_refused("[tokens]\nvm=" VM "\n", "no key-ID");
    assert_key_file_refused("[tokens]\nvm=" VM "\nkey-0=" VM_KEY_HEX "\n", "key-0");
    assert_key_file_refused("[tokens]\nvm=" VM "\nkey-256=" VM_KEY_HEX "\n", "key-256");
    assert_key_file_refused("[tokens]\nvm=" VM "\nkey-1=66a5\n", "key-1 is not");
    /* A zero-padded id is named by its number, not by a hex-like run. */
    assert_key_file_refused("[tokens]\nvm=" VM "\nkey-00000000000000000001=66a5\n",
                            "key-1 is not");
    assert_key_file_refused("[tokens]\nvm=" VM "\nkey-1=" VM_KEY_HEX "\nkey=1\n",
                            "unknown entry 'key'");
    assert_key_file_refused("[tokens]\nvm=" VM "\nkey-1=" VM_KEY_HEX "\nkey-01="
                            VM_KEY_HEX "\n", "twice");
    assert_key_file_refused("not a key file", "token keys");
    /* GKeyFile quotes a line it cannot parse: a key without "key-ID=". */
    assert_key_file_refused("[tokens]\nvm=" VM "\n" VM_KEY_HEX "\n", "hex left out");
    assert_key_file_refused("[tokens]\nvm=" VM "\n" VM_KEY_HEX "=1\n", "hex left out");
    for (guint i = 1; i <= QS_TOKEN_MAX_KEYS + 1; i++) {
        g_string_append_printf(many, "key-%u=" VM_KEY_HEX "\n", i);
    }
    assert_key_file_refused(many->str, "more than");
    g_string_free(many, TRUE);
}

static QsTokenStatus check(QsTokenVerifier *v, const char *token, gint64 now,
                           guint8 channel, guint32 conn, gboolean *view, QsTokenUse *use)
{
    return qs_token_verifier_check(v, (const guint8 *)token, strlen(token), now, channel,
                                   conn, view, use);
}

static char *mint_for(const char *vm, guint8 key_id, guint8 flags, guint32 expiry,
                      guint64 id)
{
    guint8 uuid[16], key[32];
    QsTokenClaims c = { .key_id = key_id, .flags = flags, .expiry_s = expiry };
    char *text = g_malloc(QS_TOKEN_TEXT_LEN + 1);

    memcpy(c.token_id, &id, 8);
    g_assert_true(qs_token_parse_uuid(vm, uuid));
    g_assert_true(qs_token_parse_hex_key(VM_KEY_HEX, key, 32, 32, NULL));
    qs_token_mint(key, uuid, &c, text);
    return text;
}

static void test_refusals(void)
{
    g_autoptr(QsTokenVerifier) v = verifier("");
    g_autofree char *control = mint_for(VM, 1, 0, NOW + 60, 1);
    g_autofree char *other_vm = mint_for(OTHER_VM, 1, 0, NOW + 60, 2);
    g_autofree char *unknown_key = mint_for(VM, 3, 0, NOW + 60, 3);
    g_autofree char *tampered = g_strdup(control);
    gboolean view = TRUE;
    QsTokenUse use;

    g_assert_cmpint(check(v, control, NOW, SPICE_CHANNEL_MAIN, 0, &view, &use), ==,
                    QS_TOKEN_VALID);
    g_assert_false(view);
    g_assert_cmpint(check(v, VECTOR_VIEW, NOW, SPICE_CHANNEL_MAIN, 0, &view, &use), ==,
                    QS_TOKEN_VALID);
    g_assert_true(view);
    g_assert_cmpint(check(v, control, NOW + 60, SPICE_CHANNEL_MAIN, 0, &view, &use), ==,
                    QS_TOKEN_EXPIRED);
    g_assert_cmpint(check(v, other_vm, NOW, SPICE_CHANNEL_MAIN, 0, &view, &use), ==,
                    QS_TOKEN_OTHER_VM);
    g_assert_cmpint(check(v, unknown_key, NOW, SPICE_CHANNEL_MAIN, 0, &view, &use), ==,
                    QS_TOKEN_UNKNOWN_KEY);
    /* The expiry's last byte changed: the MAC no longer fits. */
    tampered[12] = tampered[12] == 'A' ? 'B' : 'A';
    g_assert_cmpint(check(v, tampered, NOW, SPICE_CHANNEL_MAIN, 0, &view, &use), ==,
                    QS_TOKEN_BAD_MAC);
    g_assert_cmpint(check(v, "s3cret", NOW, SPICE_CHANNEL_MAIN, 0, &view, &use), ==,
                    QS_TOKEN_NOT_A_TOKEN);
    g_assert_cmpstr(qs_token_status_to_string(QS_TOKEN_OTHER_VM), ==,
                    "token for another VM");
}

/* Rotation: key 1 retired, key 2 kept: tokens of 1 stop, tokens of 2 go on. */
static void test_rotation(void)
{
    g_autofree char *text = g_strdup("[tokens]\nvm=" VM "\nkey-2=" VM_KEY_HEX "\n");
    g_autoptr(QsTokenVerifier) v = qs_token_verifier_new(text, strlen(text), NULL);
    g_autofree char *old = mint_for(VM, 1, 0, NOW + 60, 1);
    g_autofree char *new = mint_for(VM, 2, 0, NOW + 60, 2);
    gboolean view;
    QsTokenUse use;

    g_assert_cmpint(check(v, old, NOW, SPICE_CHANNEL_MAIN, 0, &view, &use), ==,
                    QS_TOKEN_UNKNOWN_KEY);
    g_assert_cmpint(check(v, new, NOW, SPICE_CHANNEL_MAIN, 0, &view, &use), ==,
                    QS_TOKEN_VALID);
}

/* The same rotation on a running helper (SetTokenKeys): the single-use
 * tokens already seen stay seen; another VM's key file is refused. */
static void test_set_keys(void)
{
    g_autoptr(QsTokenVerifier) v = verifier("");
    const char *next = "[tokens]\nvm=" VM "\nkey-2=" VM_KEY_HEX "\n";
    const char *other = "[tokens]\nvm=" OTHER_VM "\nkey-2=" VM_KEY_HEX "\n";
    g_autofree char *old = mint_for(VM, 1, 0, NOW + 60, 1);
    g_autoptr(GError) error = NULL;
    gboolean view;
    QsTokenUse use;

    g_assert_cmpint(check(v, VECTOR_ONCE, NOW, SPICE_CHANNEL_MAIN, 0, &view, &use), ==,
                    QS_TOKEN_VALID);
    qs_token_verifier_commit(v, &use, 7);
    g_assert_true(qs_token_verifier_set_keys(v, next, strlen(next), &error));
    g_assert_cmpuint(qs_token_verifier_n_keys(v), ==, 1);
    g_assert_cmpint(check(v, old, NOW, SPICE_CHANNEL_MAIN, 0, &view, &use), ==,
                    QS_TOKEN_UNKNOWN_KEY);
    g_assert_cmpint(check(v, VECTOR_ONCE, NOW, SPICE_CHANNEL_MAIN, 0, &view, &use), ==,
                    QS_TOKEN_REPLAYED);
    g_assert_false(qs_token_verifier_set_keys(v, other, strlen(other), &error));
    g_assert_nonnull(strstr(error->message, "another VM"));
    g_clear_error(&error);
    g_assert_false(qs_token_verifier_set_keys(v, "junk", 4, &error));
    g_assert_cmpuint(qs_token_verifier_n_keys(v), ==, 1);
}

static void test_single_use(void)
{
    g_autoptr(QsTokenVerifier) v = verifier("");
    gboolean view;
    QsTokenUse use;

    g_assert_cmpint(check(v, VECTOR_ONCE, NOW, SPICE_CHANNEL_MAIN, 0, &view, &use), ==,
                    QS_TOKEN_VALID);
    /* Not committed (the link failed later): still usable. */
    g_assert_cmpint(check(v, VECTOR_ONCE, NOW, SPICE_CHANNEL_MAIN, 0, &view, &use), ==,
                    QS_TOKEN_VALID);
    qs_token_verifier_commit(v, &use, 7);
    g_assert_cmpint(check(v, VECTOR_ONCE, NOW, SPICE_CHANNEL_MAIN, 0, &view, &use), ==,
                    QS_TOKEN_REPLAYED);
    /* The session's other channels still link; another session's do not. */
    g_assert_cmpint(check(v, VECTOR_ONCE, NOW, SPICE_CHANNEL_DISPLAY, 7, &view, &use), ==,
                    QS_TOKEN_VALID);
    g_assert_cmpint(check(v, VECTOR_ONCE, NOW, SPICE_CHANNEL_INPUTS, 8, &view, &use), ==,
                    QS_TOKEN_REPLAYED);
}

static void test_single_use_bound(void)
{
    g_autoptr(QsTokenVerifier) v = verifier("");
    gboolean view;
    QsTokenUse use;

    for (guint64 i = 0; i < QS_TOKEN_MAX_SINGLE_USE; i++) {
        /* Half expire 10 s from NOW, half an hour from it. */
        g_autofree char *t = mint_for(VM, 1, QS_TOKEN_FLAG_SINGLE_USE,
                                      NOW + (i % 2 ? 10 : 1800), i + 100);

        g_assert_cmpint(check(v, t, NOW, SPICE_CHANNEL_MAIN, 0, &view, &use), ==,
                        QS_TOKEN_VALID);
        qs_token_verifier_commit(v, &use, (guint32)i + 1);
    }
    g_assert_cmpint(check(v, VECTOR_ONCE, NOW, SPICE_CHANNEL_MAIN, 0, &view, &use), ==,
                    QS_TOKEN_CACHE_FULL);
    /* Once half of them expired, there is room again. */
    g_assert_cmpint(check(v, VECTOR_ONCE, NOW + 11, SPICE_CHANNEL_MAIN, 0, &view, &use),
                    ==, QS_TOKEN_VALID);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/net/token/vector", test_vector);
    g_test_add_func("/net/token/uuid-and-hex", test_uuid_and_hex);
    g_test_add_func("/net/token/decode-form", test_decode_form);
    g_test_add_func("/net/token/key-file", test_key_file);
    g_test_add_func("/net/token/refusals", test_refusals);
    g_test_add_func("/net/token/rotation", test_rotation);
    g_test_add_func("/net/token/set-keys", test_set_keys);
    g_test_add_func("/net/token/single-use", test_single_use);
    g_test_add_func("/net/token/single-use-bound", test_single_use_bound);
    return g_test_run();
}
