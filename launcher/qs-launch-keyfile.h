/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Checked values from a GKeyFile (qemu-spice.conf): a key that is unknown
 * or malformed is an error naming the file, the [group] and the key, never
 * a silent default. NAME is the file as errors name it; a reader leaves
 * *out alone when its key is absent. */
#pragma once

#include <glib.h>

typedef struct {
    const char *group;
    const char *keys[12];      /* NULL-terminated */
} QsKeyFileGroup;

/* Every group and key of KF is one of KNOWN's. */
gboolean qs_keyfile_check_known(GKeyFile *kf, const char *name, const QsKeyFileGroup *known,
                                guint n_known, GError **error);

/* Sets "NAME: [GROUP] KEY: MSG" and takes MSG; returns FALSE. */
gboolean qs_keyfile_bad(GError **error, const char *name, const char *group,
                        const char *key, char *msg);

/* The string value if present, else NULL; "" counts as a value. */
char *qs_keyfile_string(GKeyFile *kf, const char *group, const char *key);

/* true/yes or false/no. */
gboolean qs_keyfile_bool(GKeyFile *kf, const char *name, const char *group,
                         const char *key, gboolean *out, GError **error);
/* A decimal number from MIN to MAX. */
gboolean qs_keyfile_uint(GKeyFile *kf, const char *name, const char *group,
                         const char *key, guint min, guint max, guint *out,
                         GError **error);
/* An absolute path; replaces (frees) *out. */
gboolean qs_keyfile_abs_path(GKeyFile *kf, const char *name, const char *group,
                             const char *key, char **out, GError **error);
