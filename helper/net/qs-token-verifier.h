/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The helper's side of signed console tokens (qs-token.h): its VM, the
 * keys it accepts (two or more at once, for rotation) and the single-use
 * tokens already seen. */
#pragma once

#include <glib.h>
#include "net/qs-token.h"

G_BEGIN_DECLS

typedef struct QsTokenVerifier QsTokenVerifier;

/* Keys accepted at once; tokens of a retired key id stop working when the
 * key file no longer names it. */
#define QS_TOKEN_MAX_KEYS 8
/* Single-use tokens remembered until they expire; beyond this many live
 * ones, new single-use tokens are refused (QS_TOKEN_CACHE_FULL) rather than
 * forgotten, which would let them be replayed. */
#define QS_TOKEN_MAX_SINGLE_USE 4096

/* Parses a key file (GKeyFile syntax):
 *   [tokens]
 *   vm=UUID
 *   key-ID=64 hex digits     (ID 1-255; one line per key in use)
 * Errors name the line's problem, never a key. */
QsTokenVerifier *qs_token_verifier_new(const char *text, gsize len, GError **error);
void qs_token_verifier_free(QsTokenVerifier *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsTokenVerifier, qs_token_verifier_free)

guint qs_token_verifier_n_keys(const QsTokenVerifier *v);

/* Replaces the keys with those of another key file for the same VM (key
 * rotation); the single-use tokens seen so far stay remembered. */
gboolean qs_token_verifier_set_keys(QsTokenVerifier *v, const char *text, gsize len,
                                    GError **error);

/* A token that checked out, to be committed when its link succeeds. */
typedef struct {
    guint64 token_id;
    guint32 expiry_s;
    gboolean single_use;
} QsTokenUse;

/* Checks `candidate` (the client's ticket bytes) at Unix time `now_s` for a
 * link of `channel_type` in session `connection_id` (0 for a main channel).
 * A single-use token links one main channel, then only the channels of the
 * session that main channel got (spice clients send the ticket on every
 * channel). Sets *view_only and *use on QS_TOKEN_VALID. */
QsTokenStatus qs_token_verifier_check(QsTokenVerifier *v, const guint8 *candidate,
                                      gsize len, gint64 now_s, guint8 channel_type,
                                      guint32 connection_id, gboolean *view_only,
                                      QsTokenUse *use);

/* Records a single-use token's main link as session `session_id`. */
void qs_token_verifier_commit(QsTokenVerifier *v, const QsTokenUse *use,
                              guint32 session_id);

G_END_DECLS
