/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-link RSA keys generated off the main thread, one at a time, with a
 * few spares so a link rarely waits; every key is handed out once. */
#pragma once

#include <glib.h>
#include "net/qs-rsa-oaep.h"

G_BEGIN_DECLS

typedef struct QsKeyPool QsKeyPool;

/* `key` is transferred to the callee; NULL if generation failed. */
typedef void (*QsKeyReadyFunc)(QsRsaKey *key, gpointer user_data);

QsKeyPool *qs_key_pool_new(guint spares);
/* Pending waiters are dropped without being called. */
void qs_key_pool_free(QsKeyPool *pool);

/* A spare key at once, or NULL (then wait). */
QsRsaKey *qs_key_pool_take(QsKeyPool *pool);
/* Calls `func` from the main context once a key is ready. Returns an id
 * for qs_key_pool_cancel(). */
guint64 qs_key_pool_wait(QsKeyPool *pool, QsKeyReadyFunc func,
                         gpointer user_data);
void qs_key_pool_cancel(QsKeyPool *pool, guint64 id);

G_END_DECLS
