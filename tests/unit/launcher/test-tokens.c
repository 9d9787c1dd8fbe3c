/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The launcher's master keys: the file's refusals, the helper's derived key
 * file (against docs/examples/mint_token.py's vector) and minting. */

#include <string.h>
#include <glib/gstdio.h>
#include "net/qs-token.h"
#include "qs-launch-tokens.h"

#define VM "6f8e1ad4-2b1c-4f3e-9a7d-0c5b1e2f3a4b"
#define MASTER_HEX "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
/* mint_token.py: derive_vm_key(bytes(range(32)), VM) */
#define VM_KEY_HEX "66a5ab5430092c93b26de5ba03fd83c959e548680af967c7460913cbbd48ccc7"

static char *dir;

static char *write_file(const char *text)
{
    char *path = g_build_filename(dir, "master", NULL);

    g_assert_true(g_file_set_contents(path, text, -1, NULL));
    return path;
}

static void assert_refused(const char *text, const char *what)
{
    g_autofree char *path = write_file(text);
    g_autoptr(GError) error = NULL;
    QsMasterKeys keys;

    g_assert_false(qs_master_keys_load(path, &keys, &error));
    g_assert_nonnull(strstr(error->message, what));
    g_assert_null(strstr(error->message, "0001020304"));
}

static void test_load(void)
{
    g_autofree char *path = write_file("[master-keys]\n1=" MASTER_HEX "\n7=" MASTER_HEX "\n");
    g_autoptr(GError) error = NULL;
    GString *many = g_string_new("[master-keys]\n");
    QsMasterKeys keys;

    g_assert_true(qs_master_keys_load(path, &keys, &error));
    g_assert_cmpuint(keys.n, ==, 2);
    g_assert_cmpuint(keys.lens[0], ==, 32);
    qs_master_keys_clear(&keys);
    assert_refused("", "no key in a [master-keys] group");
    assert_refused("[master-keys]\n0=" MASTER_HEX "\n", "'0' is not a key id");
    assert_refused("[master-keys]\nmain=" MASTER_HEX "\n", "'main' is not a key id");
    assert_refused("[master-keys]\n1=00010203\n", "key 1 is not 16 to 64 bytes");
    assert_refused("[master-keys]\n1=" MASTER_HEX "\n01=" MASTER_HEX "\n", "twice");
    assert_refused("garbage", "master");
    /* GKeyFile quotes a line it cannot parse: a key without "ID=". */
    assert_refused("[master-keys]\n" MASTER_HEX "\n", "hex left out");
    assert_refused("[master-keys]\n" MASTER_HEX "=1\n", "hex left out");
    for (guint i = 1; i <= QS_MASTER_MAX_KEYS + 1; i++) {
        g_string_append_printf(many, "%u=" MASTER_HEX "\n", i);
    }
    assert_refused(many->str, "more than 8 master keys");
    g_string_free(many, TRUE);
}

static void test_missing_file(void)
{
    g_autofree char *dir = g_dir_make_tmp("qs-tokens-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "absent.keys", NULL);
    g_autoptr(GError) error = NULL;
    const char *first;
    QsMasterKeys keys;

    g_assert_false(qs_master_keys_load(path, &keys, &error));
    /* Named once: GLib's message has the path already. */
    first = strstr(error->message, path);
    g_assert_nonnull(first);
    g_assert_null(strstr(first + strlen(path), path));
    g_assert_cmpuint(keys.n, ==, 0);
    g_rmdir(dir);
}

static void test_helper_file_and_mint(void)
{
    g_autofree char *path = write_file("[master-keys]\n1=" MASTER_HEX "\n3=" MASTER_HEX "\n");
    g_autofree char *text = NULL;
    g_autofree char *token = NULL;
    g_autoptr(GError) error = NULL;
    QsMasterKeys keys;
    QsTokenClaims c;
    guint8 body[19], mac[16], uuid[16], vm_key[32];

    g_assert_true(qs_master_keys_load(path, &keys, &error));
    text = qs_master_keys_helper_file(&keys, VM, &error);
    g_assert_cmpstr(text, ==, "[tokens]\nvm=" VM "\nkey-1=" VM_KEY_HEX "\nkey-3=" VM_KEY_HEX
                              "\n");
    g_assert_null(qs_master_keys_helper_file(&keys, "not-a-uuid", &error));
    g_clear_error(&error);

    /* The highest id by default; flags and expiry as asked. */
    token = qs_master_keys_mint(&keys, VM, 0, TRUE, TRUE, 2000000000, &error);
    g_assert_no_error(error);
    g_assert_cmpint(qs_token_decode(token, strlen(token), &c, body, mac), ==, QS_TOKEN_VALID);
    g_assert_cmpuint(c.key_id, ==, 3);
    g_assert_cmpuint(c.flags, ==, QS_TOKEN_FLAG_VIEW_ONLY | QS_TOKEN_FLAG_SINGLE_USE);
    g_assert_cmpuint(c.expiry_s, ==, 2000000000);
    g_assert_true(qs_token_parse_uuid(VM, uuid));
    g_assert_true(qs_token_parse_hex_key(VM_KEY_HEX, vm_key, 32, 32, NULL));
    g_assert_true(qs_token_mac_ok(vm_key, uuid, body, mac));
    g_clear_pointer(&token, g_free);
    g_assert_null(qs_master_keys_mint(&keys, VM, 2, FALSE, FALSE, 2000000000, &error));
    g_assert_nonnull(strstr(error->message, "no master key with id 2"));
    g_clear_error(&error);
    g_assert_null(qs_master_keys_mint(&keys, VM, 1, FALSE, FALSE, (gint64)1 << 33, &error));
    qs_master_keys_clear(&keys);
}

int main(int argc, char **argv)
{
    g_autofree char *master = NULL;
    int rc;

    g_test_init(&argc, &argv, NULL);
    dir = g_dir_make_tmp("qs-launch-tokens-XXXXXX", NULL);
    g_test_add_func("/launcher/tokens/load", test_load);
    g_test_add_func("/launcher/tokens/missing-file", test_missing_file);
    g_test_add_func("/launcher/tokens/helper-file-and-mint", test_helper_file_and_mint);
    rc = g_test_run();
    master = g_build_filename(dir, "master", NULL);
    g_unlink(master);
    g_rmdir(dir);
    g_free(dir);
    return rc;
}
