/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The helper's token keys and its memory of single-use tokens. */

#include <string.h>
#include <gio/gio.h>
#include "net/qs-spice-protocol.h"
#include "net/qs-token-verifier.h"

typedef struct {
    guint8 id;
    guint8 key[QS_TOKEN_KEY_BYTES];
} Key;

typedef struct {
    guint32 expiry_s;
    guint32 session_id;   /* 0 until its main channel linked */
} Seen;

struct QsTokenVerifier {
    guint8 uuid[QS_TOKEN_UUID_BYTES];
    Key keys[QS_TOKEN_MAX_KEYS];
    guint n_keys;
    GHashTable *seen;     /* token id (guint64 *) -> Seen * */
};

#define GROUP "tokens"

static gboolean parse_key_line(QsTokenVerifier *v, GKeyFile *kf, const char *name,
                               GError **error)
{
    g_autofree char *hex = NULL;
    guint64 id;

    if (!g_str_has_prefix(name, "key-") ||
        !g_ascii_string_to_unsigned(name + 4, 10, 1, 255, &id, NULL)) {
        g_autofree char *shown = qs_token_redact_hex(name);

        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "token keys: unknown entry '%s' (vm=UUID or key-ID=HEX, "
                    "ID 1-255)", shown);
        return FALSE;
    }
    if (v->n_keys == QS_TOKEN_MAX_KEYS) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "token keys: more than %d keys", QS_TOKEN_MAX_KEYS);
        return FALSE;
    }
    for (guint i = 0; i < v->n_keys; i++) {
        if (v->keys[i].id == id) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                        "token keys: key id %u given twice", (guint)id);
            return FALSE;
        }
    }
    hex = g_key_file_get_value(kf, GROUP, name, NULL);
    if (!hex || !qs_token_parse_hex_key(g_strstrip(hex), v->keys[v->n_keys].key,
                                        QS_TOKEN_KEY_BYTES, QS_TOKEN_KEY_BYTES, NULL)) {
        if (hex) {
            explicit_bzero(hex, strlen(hex));
        }
        /* The id, not the name: a name may pad the id with zeros into a
         * run that reads like key material. */
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "token keys: key-%u is not %d hex digits", (guint)id,
                    2 * QS_TOKEN_KEY_BYTES);
        return FALSE;
    }
    explicit_bzero(hex, strlen(hex));
    v->keys[v->n_keys++].id = (guint8)id;
    return TRUE;
}

static gboolean parse(QsTokenVerifier *v, const char *text, gsize len, GError **error)
{
    g_autoptr(GKeyFile) kf = g_key_file_new();
    g_auto(GStrv) names = NULL;
    g_autofree char *vm = NULL;
    g_autoptr(GError) err = NULL;

    if (!g_key_file_load_from_data(kf, text, len, G_KEY_FILE_NONE, &err)) {
        g_autofree char *msg = qs_token_redact_hex(err->message);

        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "token keys: %s", msg);
        explicit_bzero(err->message, strlen(err->message));
        return FALSE;
    }
    if (!(names = g_key_file_get_keys(kf, GROUP, NULL, NULL))) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "token keys: no [" GROUP "] group");
        return FALSE;
    }
    vm = g_key_file_get_value(kf, GROUP, "vm", NULL);
    if (!vm || !qs_token_parse_uuid(g_strstrip(vm), v->uuid)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "token keys: vm= must be the VM's UUID");
        return FALSE;
    }
    for (guint i = 0; names[i]; i++) {
        if (strcmp(names[i], "vm") != 0 && !parse_key_line(v, kf, names[i], error)) {
            return FALSE;
        }
    }
    if (v->n_keys == 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "token keys: no key-ID= line");
        return FALSE;
    }
    return TRUE;
}

QsTokenVerifier *qs_token_verifier_new(const char *text, gsize len, GError **error)
{
    QsTokenVerifier *v = g_new0(QsTokenVerifier, 1);

    v->seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    if (!parse(v, text, len, error)) {
        qs_token_verifier_free(v);
        return NULL;
    }
    return v;
}

void qs_token_verifier_free(QsTokenVerifier *v)
{
    if (v) {
        g_hash_table_destroy(v->seen);
        explicit_bzero(v, sizeof(*v));
        g_free(v);
    }
}

guint qs_token_verifier_n_keys(const QsTokenVerifier *v)
{
    return v->n_keys;
}

gboolean qs_token_verifier_set_keys(QsTokenVerifier *v, const char *text, gsize len,
                                    GError **error)
{
    g_autoptr(QsTokenVerifier) next = qs_token_verifier_new(text, len, error);

    if (!next) {
        return FALSE;
    }
    if (memcmp(next->uuid, v->uuid, sizeof(v->uuid)) != 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "token keys: vm= names another VM than the keys in force");
        return FALSE;
    }
    memcpy(v->keys, next->keys, sizeof(v->keys));
    v->n_keys = next->n_keys;
    return TRUE;
}

static const Key *find_key(const QsTokenVerifier *v, guint8 id)
{
    for (guint i = 0; i < v->n_keys; i++) {
        if (v->keys[i].id == id) {
            return &v->keys[i];
        }
    }
    return NULL;
}

static void prune_expired(QsTokenVerifier *v, gint64 now_s)
{
    GHashTableIter it;
    gpointer value;

    g_hash_table_iter_init(&it, v->seen);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        if (((Seen *)value)->expiry_s <= now_s) {
            g_hash_table_iter_remove(&it);
        }
    }
}

static QsTokenStatus check_single_use(QsTokenVerifier *v, guint64 id, gint64 now_s,
                                      guint8 channel_type, guint32 connection_id)
{
    Seen *seen = g_hash_table_lookup(v->seen, &id);

    if (channel_type != SPICE_CHANNEL_MAIN) {
        /* The session's other channels; an unknown session is refused
         * later by the session table, like any other. */
        return !seen || seen->session_id == connection_id ? QS_TOKEN_VALID
                                                          : QS_TOKEN_REPLAYED;
    }
    if (seen) {
        return QS_TOKEN_REPLAYED;
    }
    if (g_hash_table_size(v->seen) >= QS_TOKEN_MAX_SINGLE_USE) {
        prune_expired(v, now_s);
        if (g_hash_table_size(v->seen) >= QS_TOKEN_MAX_SINGLE_USE) {
            return QS_TOKEN_CACHE_FULL;
        }
    }
    return QS_TOKEN_VALID;
}

QsTokenStatus qs_token_verifier_check(QsTokenVerifier *v, const guint8 *candidate,
                                      gsize len, gint64 now_s, guint8 channel_type,
                                      guint32 connection_id, gboolean *view_only,
                                      QsTokenUse *use)
{
    QsTokenClaims c;
    guint8 body[19];
    guint8 mac[16];
    const Key *key;
    QsTokenStatus st = qs_token_decode((const char *)candidate, len, &c, body, mac);

    if (st != QS_TOKEN_VALID) {
        return st;
    }
    if (memcmp(c.vm_tag, v->uuid, sizeof(c.vm_tag)) != 0) {
        return QS_TOKEN_OTHER_VM;
    }
    if (!(key = find_key(v, c.key_id))) {
        return QS_TOKEN_UNKNOWN_KEY;
    }
    if (!qs_token_mac_ok(key->key, v->uuid, body, mac)) {
        return QS_TOKEN_BAD_MAC;
    }
    if (now_s >= (gint64)c.expiry_s) {
        return QS_TOKEN_EXPIRED;
    }
    memcpy(&use->token_id, c.token_id, sizeof(use->token_id));
    use->expiry_s = c.expiry_s;
    use->single_use = (c.flags & QS_TOKEN_FLAG_SINGLE_USE) != 0;
    if (use->single_use &&
        (st = check_single_use(v, use->token_id, now_s, channel_type,
                               connection_id)) != QS_TOKEN_VALID) {
        return st;
    }
    *view_only = (c.flags & QS_TOKEN_FLAG_VIEW_ONLY) != 0;
    return QS_TOKEN_VALID;
}

void qs_token_verifier_commit(QsTokenVerifier *v, const QsTokenUse *use,
                              guint32 session_id)
{
    Seen *seen;

    if (!use->single_use || g_hash_table_contains(v->seen, &use->token_id)) {
        return;
    }
    seen = g_new(Seen, 1);
    seen->expiry_s = use->expiry_s;
    seen->session_id = session_id;
    g_hash_table_insert(v->seen, g_memdup2(&use->token_id, sizeof(guint64)), seen);
}
