/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: what a client or an operator hands the credential checks:
 * a ticket field as a token (net/qs-token.c, net/qs-token-verifier.c), a
 * token key file, and a ticket source (net/qs-ticket.c). The first byte
 * picks which. */

#include <stdint.h>
#include <string.h>
#include "net/qs-spice-protocol.h"
#include "net/qs-ticket.h"
#include "net/qs-token-verifier.h"
#include "../qs-fuzz-secrets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char keys[] =
    "[tokens]\nvm=6f8e1ad4-2b1c-4f3e-9a7d-0c5b1e2f3a4b\n"
    "key-1=66a5ab5430092c93b26de5ba03fd83c959e548680af967c7460913cbbd48ccc7\n"
    "key-2=66a5ab5430092c93b26de5ba03fd83c959e548680af967c7460913cbbd48ccc7\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    switch (data[0] % 3) {
    case 0: {
        /* A ticket field: at most what RSA-OAEP can carry. */
        static QsTokenVerifier *v;
        gboolean view;
        QsTokenUse use;
        gsize len = MIN(size - 1, 128);

        if (!v) {
            v = qs_token_verifier_new(keys, sizeof(keys) - 1, NULL);
        }
        if (qs_token_verifier_check(v, data + 1, len, 1900000000,
                                    data[0] & 4 ? SPICE_CHANNEL_MAIN : SPICE_CHANNEL_DISPLAY,
                                    data[0] >> 3, &view, &use) == QS_TOKEN_VALID) {
            qs_token_verifier_commit(v, &use, 1);
        }
        break;
    }
    case 1: {
        GError *error = NULL;
        QsTokenVerifier *v = qs_token_verifier_new((const char *)data + 1, size - 1, &error);

        /* A refusal says why without quoting a key. */
        if (!v && (!error || qs_fuzz_has_hex_run(error->message, QS_TOKEN_REDACT_HEX_MIN))) {
            __builtin_trap();
        }
        g_clear_error(&error);
        qs_token_verifier_free(v);
        break;
    }
    default: {
        QsTicket *t = qs_ticket_parse((const char *)data + 1, size - 1, 0, NULL);

        qs_ticket_unref(t);
        break;
    }
    }
    return 0;
}
