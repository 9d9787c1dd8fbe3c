/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The view password and the tokens console hands out (qs-launch-rights.h). */

#include <gio/gio.h>
#include "qs-launch-rights.h"
#include "qs-launch-run-dir.h"
#include "qs-launch-spawn.h"
#include "qs-launch-tokens.h"

gboolean qs_console_takes_tokens(const QsLaunchConfig *cfg, const QsLaunchState *st)
{
    g_autofree char *tokens = qs_run_path(cfg, st->domain, ".tokens");

    return cfg->token_keys && st->ticket_file && g_file_test(tokens, G_FILE_TEST_EXISTS);
}

char *qs_console_token(const QsLaunchConfig *cfg, const QsLaunchState *st, gboolean view_only,
                       gint ttl_s, gint64 *expiry, GError **error)
{
    QsMasterKeys keys;
    char *token;

    if (!cfg->token_keys) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                    "this host mints no tokens (no [ticket] token-keys in %s; "
                    "qemu-spice.conf(5))", cfg->path ? cfg->path : "the configuration");
        return NULL;
    }
    if (!qs_console_takes_tokens(cfg, st)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                    st->ticket_file ? "the console of '%s' takes no tokens (attached before "
                                      "[ticket] token-keys was set): detach and attach it again"
                                    : "'%s' is a proxy-only console: it takes no credential",
                    st->domain);
        return NULL;
    }
    if (ttl_s < 1 || ttl_s > QS_TOKEN_TTL_MAX_S) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--ttl must be 1 to %d seconds", QS_TOKEN_TTL_MAX_S);
        return NULL;
    }
    if (!qs_master_keys_load(cfg->token_keys, &keys, error)) {
        return NULL;
    }
    *expiry = g_get_real_time() / G_USEC_PER_SEC + ttl_s;
    token = qs_master_keys_mint(&keys, st->uuid, 0, view_only, TRUE, *expiry, error);
    qs_master_keys_clear(&keys);
    return token;
}

char *qs_view_password(const QsLaunchConfig *cfg, const QsLaunchState *st, gint ttl_s,
                       gint64 *expiry, char **source, GError **error)
{
    g_autofree char *path = qs_view_ticket_path(cfg, st->domain);
    g_autofree char *tokens = qs_run_path(cfg, st->domain, ".tokens");
    QsMasterKeys keys;
    char *token;

    if (!st->ticket_file) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                    "'%s' is a proxy-only console: every viewer has control", st->domain);
        return NULL;
    }
    if (g_file_test(path, G_FILE_TEST_EXISTS)) {
        *source = g_steal_pointer(&path);
        return qs_ticket_read_file(*source, expiry, error);
    }
    if (!cfg->token_keys || !g_file_test(tokens, G_FILE_TEST_EXISTS)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                    "'%s' has no view-only ticket ('set-ticket %s --rights view' makes "
                    "one) and takes no tokens", st->domain, st->domain);
        return NULL;
    }
    if (!qs_master_keys_load(cfg->token_keys, &keys, error)) {
        return NULL;
    }
    *expiry = g_get_real_time() / G_USEC_PER_SEC + ttl_s;
    token = qs_master_keys_mint(&keys, st->uuid, 0, TRUE, FALSE, *expiry, error);
    qs_master_keys_clear(&keys);
    *source = g_strdup("a signed token");
    return token;
}
