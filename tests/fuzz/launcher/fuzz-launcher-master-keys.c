/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the launcher's master key file ([ticket] token-keys) as
 * qs_master_keys_load_data reads it. A refusal names the file and quotes no
 * key; from what it accepts, the helper's key file is derived, the helper's
 * verifier reads it, and a token minted with each key is valid there. */

#include <stdint.h>
#include <string.h>

#include "net/qs-spice-protocol.h"
#include "net/qs-token-verifier.h"
#include "qs-launch-tokens.h"
#include "../qs-fuzz-secrets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A key file is a few lines; GKeyFile has no bound of its own. */
#define QS_FUZZ_INPUT_MAX (16 * 1024)
#define NAME "fuzz-master-keys"
#define VM "6f8e1ad4-2b1c-4f3e-9a7d-0c5b1e2f3a4b"
#define NOW_S 1900000000
#define EXPIRY_S 2000000000

static void check_accepted(const QsMasterKeys *keys)
{
    g_autofree char *helper_file = NULL;
    g_autoptr(QsTokenVerifier) v = NULL;

    if (keys->n < 1 || keys->n > QS_MASTER_MAX_KEYS) {
        __builtin_trap();
    }
    for (guint i = 0; i < keys->n; i++) {
        if (keys->ids[i] == 0 || keys->lens[i] < QS_TOKEN_MASTER_MIN_BYTES ||
            keys->lens[i] > QS_TOKEN_MASTER_MAX_BYTES) {
            __builtin_trap();
        }
        for (guint j = 0; j < i; j++) {
            if (keys->ids[j] == keys->ids[i]) {
                __builtin_trap();
            }
        }
    }
    helper_file = qs_master_keys_helper_file(keys, VM, NULL);
    v = helper_file ? qs_token_verifier_new(helper_file, strlen(helper_file), NULL) : NULL;
    if (!v || qs_token_verifier_n_keys(v) != keys->n) {
        __builtin_trap();
    }
    explicit_bzero(helper_file, strlen(helper_file));
    for (guint i = 0; i < keys->n; i++) {
        g_autofree char *token = qs_master_keys_mint(keys, VM, keys->ids[i], FALSE, FALSE,
                                                     EXPIRY_S, NULL);
        gboolean view_only = TRUE;
        QsTokenUse use;

        if (!token ||
            qs_token_verifier_check(v, (const guint8 *)token, strlen(token), NOW_S,
                                    SPICE_CHANNEL_MAIN, 0, &view_only, &use) != QS_TOKEN_VALID ||
            view_only) {
            __builtin_trap();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *text = NULL;
    QsMasterKeys keys;
    GError *error = NULL;

    if (size > QS_FUZZ_INPUT_MAX) {
        return 0;
    }
    /* The file's bytes up to a NUL, as GKeyFile sees them. */
    text = g_strndup((const char *)data, size);
    if (qs_master_keys_load_data(text, strlen(text), NAME, &keys, &error)) {
        if (error) {
            __builtin_trap();
        }
        check_accepted(&keys);
        qs_master_keys_clear(&keys);
        return 0;
    }
    if (!error || !g_str_has_prefix(error->message, NAME ": ") ||
        qs_fuzz_has_hex_run(error->message, QS_TOKEN_REDACT_HEX_MIN)) {
        __builtin_trap();
    }
    g_error_free(error);
    return 0;
}
