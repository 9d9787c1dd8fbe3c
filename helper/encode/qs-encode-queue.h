/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The encode workers: one queue of encode jobs, each answered back on the main context that queued it. */
#pragma once

#include <glib.h>

/*
 * The channels' thread hands encodes here instead of running them; a few
 * worker threads (one per processor) take the jobs in the order they came
 * and each job's `done` runs afterwards on the main context that was the
 * thread default when it was queued, never inside qs_encode_queue_push().
 * Two jobs that must not run at once (frames of one encoder) are the
 * caller's to order: it queues the second from the first's `done`.
 *
 * Reference-counted: its owner, whoever may still queue a job (a shared
 * encoder that outlives its console) and every job until its answer hold
 * it, so a job's `done` always comes while that context runs.
 */

typedef struct QsEncodeQueue QsEncodeQueue;

/* On a worker: the encode, with everything it needs in `job`. */
typedef void (*QsEncodeWork)(gpointer job);
/* On the queuing main context, after `work`: takes the answer; owns `job`. */
typedef void (*QsEncodeDone)(gpointer job);

QsEncodeQueue *qs_encode_queue_new(void);
/* A queue without workers, for a fuzz target: each job's `work` runs
 * inside qs_encode_queue_push(), its `done` still later on the context. No
 * thread is made, and an input's work is done when its loop is idle. */
QsEncodeQueue *qs_encode_queue_new_inline(void);
QsEncodeQueue *qs_encode_queue_ref(QsEncodeQueue *q);
void qs_encode_queue_unref(QsEncodeQueue *q);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsEncodeQueue, qs_encode_queue_unref)

void qs_encode_queue_push(QsEncodeQueue *q, QsEncodeWork work, QsEncodeDone done,
                          gpointer job);

/* Jobs queued or running and answers not given yet (tests). */
guint qs_encode_queue_pending(const QsEncodeQueue *q);
/* The same over every queue of the process (tests). */
guint qs_encode_queue_pending_all(void);
