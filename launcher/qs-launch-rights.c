/* SPDX-License-Identifier: GPL-2.0-or-later */
/* set-ticket --rights view and console --rights view (qs-launch-rights.h). */

#include <stdio.h>
#include <string.h>
#include <gio/gio.h>
#include "qs-launch-commands.h"
#include "qs-launch-control.h"
#include "qs-launch-log.h"
#include "qs-launch-rights.h"
#include "qs-launch-run-dir.h"
#include "qs-launch-spawn.h"
#include "qs-launch-tokens.h"

int qs_cmd_set_view_ticket(QsLaunchConfig *cfg, const char *domain,
                           const char *ticket_file, const char *expires)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(GDBusConnection) conn = NULL;
    g_autofree char *password = NULL;
    g_autofree char *path = NULL;
    g_autofree char *ctl = NULL;
    gint64 expiry;
    g_autoptr(QsLaunchState) st = qs_ticket_command_start(cfg, domain, ticket_file, expires,
                                                          &password, &expiry);
    gboolean ok;

    if (!st) {
        return 1;
    }
    /* The running helper first (it refuses the control ticket's password);
     * then the file, which the monitor passes to a restarted helper. */
    ctl = qs_run_path(cfg, st->domain, ".ctl");
    path = qs_view_ticket_path(cfg, st->domain);
    ok = (conn = qs_control_connect(ctl, &err)) &&
         qs_control_set_view_ticket(conn, password, expiry, &err) &&
         qs_ticket_write_file(path, password, expiry, &err);
    explicit_bzero(password, strlen(password));
    if (!ok) {
        qs_log_error("set-ticket: %s", err->message);
        return 1;
    }
    printf("%s: new view-only ticket in %s; viewers who show it see and hear the guest, "
           "their input does not reach it ('console %s --rights view' prints it)\n",
           st->domain, path, st->domain);
    return 0;
}

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
