/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A small pool of fresh RSA keys fed by a worker thread. */

#include <gio/gio.h>
#include "net/qs-key-pool.h"

typedef struct {
    guint64 id;
    QsKeyReadyFunc func;
    gpointer user_data;
} Waiter;

struct QsKeyPool {
    gint ref;
    gboolean dead;          /* freed by its owner; a running task ends it */
    guint spares_wanted;
    GQueue spares;          /* of QsRsaKey */
    GQueue waiters;         /* of Waiter */
    guint64 next_id;
    gboolean generating;
};

static void pool_unref(QsKeyPool *pool)
{
    if (--pool->ref > 0) {
        return;
    }
    g_queue_clear_full(&pool->spares, (GDestroyNotify)qs_rsa_key_free);
    g_queue_clear_full(&pool->waiters, g_free);
    g_free(pool);
}

static void generate_thread(GTask *task, gpointer source, gpointer data,
                            GCancellable *cancellable)
{
    GError *error = NULL;
    QsRsaKey *key = qs_rsa_key_generate(&error);

    (void)source;
    (void)data;
    (void)cancellable;
    if (key) {
        g_task_return_pointer(task, key, (GDestroyNotify)qs_rsa_key_free);
    } else {
        g_task_return_error(task, error);
    }
}

static void maybe_generate(QsKeyPool *pool);

static void generated(GObject *source, GAsyncResult *res, gpointer data)
{
    QsKeyPool *pool = data;
    g_autoptr(GError) error = NULL;
    QsRsaKey *key = g_task_propagate_pointer(G_TASK(res), &error);

    (void)source;
    pool->generating = FALSE;
    if (pool->dead) {
        qs_rsa_key_free(key);
        pool_unref(pool);
        return;
    }
    if (!key) {
        g_warning("RSA key generation: %s", error->message);
    }
    if (!g_queue_is_empty(&pool->waiters)) {
        Waiter *w = g_queue_pop_head(&pool->waiters);

        w->func(key, w->user_data);
        g_free(w);
    } else if (key) {
        g_queue_push_tail(&pool->spares, key);
    }
    if (!pool->dead) {
        maybe_generate(pool);
    }
    pool_unref(pool);
}

static void maybe_generate(QsKeyPool *pool)
{
    g_autoptr(GTask) task = NULL;

    if (pool->generating ||
        (g_queue_is_empty(&pool->waiters) &&
         pool->spares.length >= pool->spares_wanted)) {
        return;
    }
    pool->generating = TRUE;
    pool->ref++;
    task = g_task_new(NULL, NULL, generated, pool);
    g_task_run_in_thread(task, generate_thread);
}

QsKeyPool *qs_key_pool_new(guint spares)
{
    QsKeyPool *pool = g_new0(QsKeyPool, 1);

    pool->ref = 1;
    pool->spares_wanted = spares;
    g_queue_init(&pool->spares);
    g_queue_init(&pool->waiters);
    maybe_generate(pool);
    return pool;
}

void qs_key_pool_free(QsKeyPool *pool)
{
    if (!pool) {
        return;
    }
    pool->dead = TRUE;
    pool_unref(pool);
}

QsRsaKey *qs_key_pool_take(QsKeyPool *pool)
{
    QsRsaKey *key = g_queue_pop_head(&pool->spares);

    maybe_generate(pool);
    return key;
}

guint64 qs_key_pool_wait(QsKeyPool *pool, QsKeyReadyFunc func,
                         gpointer user_data)
{
    Waiter *w = g_new0(Waiter, 1);

    w->id = ++pool->next_id;
    w->func = func;
    w->user_data = user_data;
    g_queue_push_tail(&pool->waiters, w);
    maybe_generate(pool);
    return w->id;
}

void qs_key_pool_cancel(QsKeyPool *pool, guint64 id)
{
    for (GList *l = pool->waiters.head; l; l = l->next) {
        Waiter *w = l->data;

        if (w->id == id) {
            g_queue_delete_link(&pool->waiters, l);
            g_free(w);
            return;
        }
    }
}
