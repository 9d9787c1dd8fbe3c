/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Signed console tokens on the host: the master key file ([ticket]
 * token-keys), each helper's derived key file, and the `token` command. */
#pragma once

#include <glib.h>
#include "net/qs-token.h"
#include "qs-launch-config.h"

#define QS_MASTER_MAX_KEYS 8
/* The longest a token the launcher mints may live (--ttl). */
#define QS_TOKEN_TTL_MAX_S (30 * 86400)

typedef struct {
    guint n;
    guint8 ids[QS_MASTER_MAX_KEYS];
    guint8 keys[QS_MASTER_MAX_KEYS][QS_TOKEN_MASTER_MAX_BYTES];
    gsize lens[QS_MASTER_MAX_KEYS];
} QsMasterKeys;

/* Reads a master key file:
 *   [master-keys]
 *   ID=HEX            (ID 1-255, 16 to 64 bytes; at most 8 keys)
 * Errors name the file and the line's problem, never a key. */
gboolean qs_master_keys_load(const char *path, QsMasterKeys *keys, GError **error);
/* The same from the file's text; `path` names it in errors. */
gboolean qs_master_keys_load_data(const char *data, gsize len, const char *path,
                                  QsMasterKeys *keys, GError **error);
void qs_master_keys_clear(QsMasterKeys *keys);

/* The helper's key file (qemu-spice --token-keys-file) for VM `uuid`: one
 * derived key per master key id. */
char *qs_master_keys_helper_file(const QsMasterKeys *keys, const char *uuid,
                                 GError **error);

/* Mints a token for VM `uuid` with master key `key_id` (0: the highest id). */
char *qs_master_keys_mint(const QsMasterKeys *keys, const char *uuid, guint key_id,
                          gboolean view_only, gboolean single_use, gint64 expiry_s,
                          GError **error);

/* Derives the helper's key file for VM `uuid` from [ticket] token-keys and
 * writes it to `path` (mode 0600, read by the helper before it drops its
 * rights); returns its text (wipe it after use). */
char *qs_launch_token_keys_write(const QsLaunchConfig *cfg, const char *uuid,
                                 const char *path, GError **error);

/* The `token DOMAIN` command: prints a token for the attached console. */
int qs_cmd_token(QsLaunchConfig *cfg, const char *domain, const char *rights,
                 gint ttl_s, gboolean single_use, gint key_id);
