/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The encode workers: a thread pool and the way back to each job's main context. */
#include "encode/qs-encode-queue.h"

struct QsEncodeQueue {
    gint ref;
    gint pending;               /* pushed, not yet answered */
    GThreadPool *pool;
};

/* Every queue's, for a test that runs its loop until all is answered. */
static gint pending_all;

typedef struct {
    QsEncodeQueue *q;           /* a reference, until the answer */
    QsEncodeWork work;
    QsEncodeDone done;
    gpointer job;
    GMainContext *context;
} Item;

static gboolean answer(gpointer data)
{
    Item *item = data;
    QsEncodeQueue *q = item->q;

    item->done(item->job);
    g_atomic_int_add(&q->pending, -1);
    g_atomic_int_add(&pending_all, -1);
    g_main_context_unref(item->context);
    g_free(item);
    qs_encode_queue_unref(q);
    return G_SOURCE_REMOVE;
}

static void run(gpointer data, gpointer user)
{
    Item *item = data;
    GSource *source = g_idle_source_new();

    (void)user;
    item->work(item->job);
    /* At the priority GTask answered with, so the order against the
     * channels' other sources stays as it was. */
    g_source_set_priority(source, G_PRIORITY_DEFAULT);
    g_source_set_callback(source, answer, item, NULL);
    g_source_attach(source, item->context);
    g_source_unref(source);
}

QsEncodeQueue *qs_encode_queue_new(void)
{
    QsEncodeQueue *q = g_new0(QsEncodeQueue, 1);

    q->ref = 1;
    /* One worker per processor: more would only take turns on them, as
     * each x264 or JPEG encode keeps its one thread busy. Not exclusive:
     * idle threads go back to GLib's shared pool. */
    q->pool = g_thread_pool_new(run, q, (gint)MAX(g_get_num_processors(), 1u), FALSE, NULL);
    return q;
}

QsEncodeQueue *qs_encode_queue_new_inline(void)
{
    QsEncodeQueue *q = g_new0(QsEncodeQueue, 1);

    q->ref = 1;
    return q;
}

QsEncodeQueue *qs_encode_queue_ref(QsEncodeQueue *q)
{
    g_atomic_int_inc(&q->ref);
    return q;
}

void qs_encode_queue_unref(QsEncodeQueue *q)
{
    if (!q || !g_atomic_int_dec_and_test(&q->ref)) {
        return;
    }
    /* Every job holds a reference until answered: nothing is queued or
     * running now, so this does not wait. */
    if (q->pool) {
        g_thread_pool_free(q->pool, FALSE, TRUE);
    }
    g_free(q);
}

void qs_encode_queue_push(QsEncodeQueue *q, QsEncodeWork work, QsEncodeDone done,
                          gpointer job)
{
    Item *item = g_new0(Item, 1);

    *item = (Item){ qs_encode_queue_ref(q), work, done, job,
                    g_main_context_ref_thread_default() };
    g_atomic_int_inc(&q->pending);
    g_atomic_int_inc(&pending_all);
    if (q->pool) {
        g_thread_pool_push(q->pool, item, NULL);
    } else {
        run(item, NULL);
    }
}

guint qs_encode_queue_pending(const QsEncodeQueue *q)
{
    return (guint)g_atomic_int_get(&q->pending);
}

guint qs_encode_queue_pending_all(void)
{
    return (guint)g_atomic_int_get(&pending_all);
}
