/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Checked GKeyFile values (qs-launch-keyfile.h): every error names the
 * file, the group and the key. */

#include <string.h>
#include "qs-launch-keyfile.h"

#define BAD(key_group, key, ...) \
    qs_keyfile_bad(error, name, key_group, key, g_strdup_printf(__VA_ARGS__))

gboolean qs_keyfile_bad(GError **error, const char *name, const char *group,
                        const char *key, char *msg)
{
    g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                "%s: [%s] %s: %s", name, group, key, msg);
    g_free(msg);
    return FALSE;
}

static const QsKeyFileGroup *known_group(const QsKeyFileGroup *known, guint n_known,
                                         const char *group)
{
    const QsKeyFileGroup *kg = NULL;

    for (guint i = 0; i < n_known; i++) {
        if (strcmp(known[i].group, group) == 0) {
            kg = &known[i];
        }
    }
    return kg;
}

gboolean qs_keyfile_check_known(GKeyFile *kf, const char *name, const QsKeyFileGroup *known,
                                guint n_known, GError **error)
{
    g_auto(GStrv) groups = g_key_file_get_groups(kf, NULL);

    for (guint g = 0; groups[g]; g++) {
        const QsKeyFileGroup *kg = known_group(known, n_known, groups[g]);
        g_auto(GStrv) keys = NULL;

        if (!kg) {
            g_autoptr(GString) names = g_string_new(NULL);

            for (guint i = 0; i < n_known; i++) {
                g_string_append_printf(names, "%s%s", i ? ", " : "", known[i].group);
            }
            g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_GROUP_NOT_FOUND,
                        "%s: unknown group [%s] (known: %s)", name, groups[g], names->str);
            return FALSE;
        }
        keys = g_key_file_get_keys(kf, groups[g], NULL, NULL);
        for (guint k = 0; keys && keys[k]; k++) {
            gboolean ok = FALSE;

            for (guint i = 0; kg->keys[i]; i++) {
                ok |= strcmp(kg->keys[i], keys[k]) == 0;
            }
            if (!ok) {
                g_set_error(error, G_KEY_FILE_ERROR,
                            G_KEY_FILE_ERROR_KEY_NOT_FOUND,
                            "%s: [%s] %s: unknown key", name, groups[g],
                            keys[k]);
                return FALSE;
            }
        }
    }
    return TRUE;
}

char *qs_keyfile_string(GKeyFile *kf, const char *group, const char *key)
{
    if (!g_key_file_has_key(kf, group, key, NULL)) {
        return NULL;
    }
    return g_key_file_get_string(kf, group, key, NULL);
}

gboolean qs_keyfile_bool(GKeyFile *kf, const char *name, const char *group,
                         const char *key, gboolean *out, GError **error)
{
    g_autofree char *v = qs_keyfile_string(kf, group, key);

    if (!v) {
        return TRUE;
    }
    if (strcmp(v, "true") == 0 || strcmp(v, "yes") == 0) {
        *out = TRUE;
    } else if (strcmp(v, "false") == 0 || strcmp(v, "no") == 0) {
        *out = FALSE;
    } else {
        return BAD(group, key, "'%s' is not a boolean (true/false)", v);
    }
    return TRUE;
}

gboolean qs_keyfile_uint(GKeyFile *kf, const char *name, const char *group,
                         const char *key, guint min, guint max, guint *out,
                         GError **error)
{
    g_autofree char *v = qs_keyfile_string(kf, group, key);
    guint64 n = 0;

    if (!v) {
        return TRUE;
    }
    if (!g_ascii_string_to_unsigned(v, 10, min, max, &n, NULL)) {
        return BAD(group, key, "'%s' is not a number from %u to %u", v, min, max);
    }
    *out = (guint)n;
    return TRUE;
}

gboolean qs_keyfile_abs_path(GKeyFile *kf, const char *name, const char *group,
                             const char *key, char **out, GError **error)
{
    g_autofree char *v = qs_keyfile_string(kf, group, key);

    if (!v) {
        return TRUE;
    }
    if (!g_path_is_absolute(v)) {
        return BAD(group, key, "'%s' is not an absolute path", v);
    }
    g_free(*out);
    *out = g_steal_pointer(&v);
    return TRUE;
}
