/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Master keys, derived helper keys and minting (qs-launch-tokens.h). The
 * format itself is the helper's (net/qs-token.c), linked here, so what the
 * launcher mints is by construction what the helper checks. */

#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <gio/gio.h>
#include "qs-launch-log.h"
#include "qs-launch-run-dir.h"
#include "qs-launch-tokens.h"

#define GROUP "master-keys"

void qs_master_keys_clear(QsMasterKeys *keys)
{
    explicit_bzero(keys, sizeof(*keys));
}

static gboolean load_one(GKeyFile *kf, const char *path, const char *name,
                         QsMasterKeys *keys, GError **error)
{
    g_autofree char *hex = NULL;
    guint64 id;
    guint i = keys->n;
    gboolean ok;

    if (!g_ascii_string_to_unsigned(name, 10, 1, 255, &id, NULL)) {
        g_autofree char *shown = qs_token_redact_hex(name);

        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "%s: [" GROUP "] '%s' is not a key id (1-255)", path, shown);
        return FALSE;
    }
    if (i == QS_MASTER_MAX_KEYS) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "%s: more than %d master keys", path, QS_MASTER_MAX_KEYS);
        return FALSE;
    }
    for (guint j = 0; j < i; j++) {
        if (keys->ids[j] == id) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                        "%s: key id %u given twice", path, (guint)id);
            return FALSE;
        }
    }
    hex = g_strstrip(g_key_file_get_value(kf, GROUP, name, NULL));
    ok = qs_token_parse_hex_key(hex, keys->keys[i], QS_TOKEN_MASTER_MIN_BYTES,
                                QS_TOKEN_MASTER_MAX_BYTES, &keys->lens[i]);
    explicit_bzero(hex, strlen(hex));
    if (!ok) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "%s: key %u is not %d to %d bytes of hex", path, (guint)id,
                    QS_TOKEN_MASTER_MIN_BYTES, QS_TOKEN_MASTER_MAX_BYTES);
        return FALSE;
    }
    keys->ids[i] = (guint8)id;
    keys->n++;
    return TRUE;
}

gboolean qs_master_keys_load_data(const char *data, gsize len, const char *path,
                                  QsMasterKeys *keys, GError **error)
{
    g_autoptr(GKeyFile) kf = g_key_file_new();
    g_auto(GStrv) names = NULL;
    g_autoptr(GError) err = NULL;

    memset(keys, 0, sizeof(*keys));
    if (!g_key_file_load_from_data(kf, data, len, G_KEY_FILE_NONE, &err)) {
        g_autofree char *msg = qs_token_redact_hex(err->message);

        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s: %s", path, msg);
        explicit_bzero(err->message, strlen(err->message));
        return FALSE;
    }
    names = g_key_file_get_keys(kf, GROUP, NULL, NULL);
    for (guint i = 0; names && names[i]; i++) {
        if (!load_one(kf, path, names[i], keys, error)) {
            qs_master_keys_clear(keys);
            return FALSE;
        }
    }
    if (keys->n == 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "%s: no key in a [" GROUP "] group", path);
        return FALSE;
    }
    return TRUE;
}

gboolean qs_master_keys_load(const char *path, QsMasterKeys *keys, GError **error)
{
    char *data = NULL;
    gsize len = 0;
    gboolean ok;

    memset(keys, 0, sizeof(*keys));
    /* GLib's message names the file already. */
    if (!g_file_get_contents(path, &data, &len, error)) {
        return FALSE;
    }
    ok = qs_master_keys_load_data(data, len, path, keys, error);
    /* The file's text holds the keys too. */
    explicit_bzero(data, len);
    g_free(data);
    return ok;
}

static gboolean parse_uuid(const char *uuid, guint8 raw[QS_TOKEN_UUID_BYTES],
                           GError **error)
{
    if (!uuid || !qs_token_parse_uuid(uuid, raw)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "'%s' is not a domain UUID", uuid ? uuid : "");
        return FALSE;
    }
    return TRUE;
}

char *qs_master_keys_helper_file(const QsMasterKeys *keys, const char *uuid,
                                 GError **error)
{
    guint8 raw[QS_TOKEN_UUID_BYTES], vm_key[QS_TOKEN_KEY_BYTES];
    GString *out;

    if (!parse_uuid(uuid, raw, error)) {
        return NULL;
    }
    out = g_string_new("[tokens]\n");
    g_string_append_printf(out, "vm=%s\n", uuid);
    for (guint i = 0; i < keys->n; i++) {
        qs_token_derive_vm_key(keys->keys[i], keys->lens[i], raw, vm_key);
        g_string_append_printf(out, "key-%u=", keys->ids[i]);
        for (guint b = 0; b < QS_TOKEN_KEY_BYTES; b++) {
            g_string_append_printf(out, "%02x", vm_key[b]);
        }
        g_string_append_c(out, '\n');
    }
    explicit_bzero(vm_key, sizeof(vm_key));
    return g_string_free(out, FALSE);
}

char *qs_master_keys_mint(const QsMasterKeys *keys, const char *uuid, guint key_id,
                          gboolean view_only, gboolean single_use, gint64 expiry_s,
                          GError **error)
{
    guint8 raw[QS_TOKEN_UUID_BYTES], vm_key[QS_TOKEN_KEY_BYTES];
    QsTokenClaims c = { 0 };
    char text[QS_TOKEN_TEXT_LEN + 1];
    gint pick = -1;

    if (!parse_uuid(uuid, raw, error)) {
        return NULL;
    }
    for (guint i = 0; i < keys->n; i++) {
        if (key_id ? keys->ids[i] == key_id
                   : pick < 0 || keys->ids[i] > keys->ids[pick]) {
            pick = (gint)i;
        }
    }
    if (pick < 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                    "no master key with id %u", key_id);
        return NULL;
    }
    if (expiry_s <= 0 || expiry_s > G_MAXUINT32) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "the expiry does not fit a token (1970 to 2106)");
        return NULL;
    }
    if (getrandom(c.token_id, sizeof(c.token_id), 0) != sizeof(c.token_id)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "getrandom failed");
        return NULL;
    }
    c.key_id = keys->ids[pick];
    c.flags = (view_only ? QS_TOKEN_FLAG_VIEW_ONLY : 0) |
              (single_use ? QS_TOKEN_FLAG_SINGLE_USE : 0);
    c.expiry_s = (guint32)expiry_s;
    qs_token_derive_vm_key(keys->keys[pick], keys->lens[pick], raw, vm_key);
    qs_token_mint(vm_key, raw, &c, text);
    explicit_bzero(vm_key, sizeof(vm_key));
    return g_strdup(text);
}

char *qs_launch_token_keys_write(const QsLaunchConfig *cfg, const char *uuid,
                                 const char *path, GError **error)
{
    QsMasterKeys keys;
    char *text;

    if (!qs_master_keys_load(cfg->token_keys, &keys, error)) {
        return NULL;
    }
    text = qs_master_keys_helper_file(&keys, uuid, error);
    qs_master_keys_clear(&keys);
    if (text && !g_file_set_contents_full(path, text, -1, G_FILE_SET_CONTENTS_CONSISTENT,
                                          0600, error)) {
        explicit_bzero(text, strlen(text));
        g_clear_pointer(&text, g_free);
    }
    return text;
}

int qs_cmd_token(QsLaunchConfig *cfg, const char *domain, const char *rights,
                 gint ttl_s, gboolean single_use, gint key_id)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(QsLaunchState) st = NULL;
    g_autofree char *keys_file = NULL;
    g_autofree char *token = NULL;
    QsMasterKeys keys;
    gboolean view;

    if (!cfg->token_keys) {
        qs_log_error("token: no [ticket] token-keys in %s: this host mints no tokens",
                     cfg->path ? cfg->path : "the configuration");
        return 2;
    }
    if (rights && strcmp(rights, "view") != 0 && strcmp(rights, "control") != 0) {
        qs_log_error("token: --rights must be view or control, not '%s'", rights);
        return 2;
    }
    view = rights && strcmp(rights, "view") == 0;
    if (ttl_s < 1 || ttl_s > QS_TOKEN_TTL_MAX_S) {
        qs_log_error("token: --ttl must be 1 to %d seconds", QS_TOKEN_TTL_MAX_S);
        return 2;
    }
    if (key_id < 0 || key_id > 255) {
        qs_log_error("token: --key-id must be 1 to 255");
        return 2;
    }
    if (!(st = qs_find_state(cfg, domain, &err))) {
        qs_log_error("token: %s", err->message);
        return 1;
    }
    /* A console attached before tokens were configured would refuse it. */
    keys_file = qs_run_path(cfg, st->domain, ".tokens");
    if (!g_file_test(keys_file, G_FILE_TEST_EXISTS)) {
        qs_log_error("token: the console of '%s' takes no tokens (attached without "
                     "[ticket] token-keys): detach and attach it again", st->domain);
        return 1;
    }
    if (!qs_master_keys_load(cfg->token_keys, &keys, &err)) {
        qs_log_error("token: %s", err->message);
        return 1;
    }
    token = qs_master_keys_mint(&keys, st->uuid, (guint)key_id, view, single_use,
                                g_get_real_time() / G_USEC_PER_SEC + ttl_s, &err);
    qs_master_keys_clear(&keys);
    if (!token) {
        qs_log_error("token: %s", err->message);
        return 1;
    }
    printf("%s\n", token);
    explicit_bzero(token, strlen(token));
    return 0;
}
