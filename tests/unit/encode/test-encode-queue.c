/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the encode workers: each job runs off the queuing thread and is answered once, later, on the queuing context. */
#include "encode/qs-encode-queue.h"

#define JOBS 64

typedef struct {
    guint *answers;             /* the test's count */
    GThread *ran_on;            /* set by the worker */
    GThread *answered_on;
    guint sum;                  /* the worker's result */
    guint n;
} Job;

static void work(gpointer data)
{
    Job *job = data;

    job->ran_on = g_thread_self();
    for (guint i = 0; i <= job->n; i++) {
        job->sum += i;
    }
}

static void done(gpointer data)
{
    Job *job = data;

    job->answered_on = g_thread_self();
    (*job->answers)++;
}

/* Runs the default context until `*answers` is `n` (bounded). */
static void wait_answers(const guint *answers, guint n)
{
    gint64 end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;

    while (*answers < n && g_get_monotonic_time() < end) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(200);
    }
    g_assert_cmpuint(*answers, ==, n);
}

static void test_answers(void)
{
    g_autoptr(QsEncodeQueue) q = qs_encode_queue_new();
    Job jobs[JOBS] = { 0 };
    guint answers = 0;

    for (guint i = 0; i < JOBS; i++) {
        jobs[i] = (Job){ &answers, NULL, NULL, 0, i * 1000 };
        qs_encode_queue_push(q, work, done, &jobs[i]);
    }
    /* Never inside the push. */
    g_assert_cmpuint(answers, ==, 0);
    wait_answers(&answers, JOBS);
    for (guint i = 0; i < JOBS; i++) {
        guint64 n = jobs[i].n;

        g_assert_true(jobs[i].ran_on != g_thread_self());
        g_assert_true(jobs[i].answered_on == g_thread_self());
        g_assert_cmpuint(jobs[i].sum, ==, (guint)(n * (n + 1) / 2));
    }
    /* No answer twice. */
    for (int i = 0; i < 100; i++) {
        g_main_context_iteration(NULL, FALSE);
    }
    g_assert_cmpuint(answers, ==, JOBS);
    g_assert_cmpuint(qs_encode_queue_pending(q), ==, 0);
}

/* Answers come on the context that was the thread default at the push,
 * and the queue outlives its owner's reference until they have. */
static void test_own_context_outlives_owner(void)
{
    g_autoptr(GMainContext) ctx = g_main_context_new();
    QsEncodeQueue *q = qs_encode_queue_new();
    Job job = { 0 };
    guint answers = 0;
    gint64 end;

    job = (Job){ &answers, NULL, NULL, 0, 10 };
    g_main_context_push_thread_default(ctx);
    qs_encode_queue_push(q, work, done, &job);
    g_main_context_pop_thread_default(ctx);
    qs_encode_queue_unref(q);
    /* The default context never gets it. */
    for (int i = 0; i < 200; i++) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(500);
    }
    g_assert_cmpuint(answers, ==, 0);
    end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
    while (answers < 1 && g_get_monotonic_time() < end) {
        g_main_context_iteration(ctx, FALSE);
        g_usleep(200);
    }
    g_assert_cmpuint(answers, ==, 1);
    g_assert_cmpuint(job.sum, ==, 55);
}

/* Without workers: the work inside the push, on this thread; the answer
 * still later, from the context; the count of every queue follows. */
static void test_inline(void)
{
    g_autoptr(QsEncodeQueue) q = qs_encode_queue_new_inline();
    Job job = { 0 };
    guint answers = 0, before = qs_encode_queue_pending_all();

    job = (Job){ &answers, NULL, NULL, 0, 10 };
    qs_encode_queue_push(q, work, done, &job);
    g_assert_true(job.ran_on == g_thread_self());
    g_assert_cmpuint(job.sum, ==, 55);
    g_assert_cmpuint(answers, ==, 0);
    g_assert_cmpuint(qs_encode_queue_pending(q), ==, 1);
    g_assert_cmpuint(qs_encode_queue_pending_all(), ==, before + 1);
    g_assert_true(g_main_context_iteration(NULL, FALSE));
    g_assert_cmpuint(answers, ==, 1);
    g_assert_true(job.answered_on == g_thread_self());
    g_assert_cmpuint(qs_encode_queue_pending(q), ==, 0);
    g_assert_cmpuint(qs_encode_queue_pending_all(), ==, before);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/encode/queue/answers", test_answers);
    g_test_add_func("/encode/queue/own-context-outlives-owner",
                    test_own_context_outlives_owner);
    g_test_add_func("/encode/queue/inline", test_inline);
    return g_test_run();
}
