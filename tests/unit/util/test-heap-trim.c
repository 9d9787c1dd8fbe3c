/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qs_heap_trim_soon: requests coalesce into one trim, after the delay. */
#include "util/qs-heap-trim.h"

/* A trim that never comes (liveness only; nothing checked against it). */
#define LIVENESS_US (10 * G_USEC_PER_SEC)

/*
 * What is checked is the timer's due time, not how long the loop took:
 * GLib never fires a timeout before it, and a loaded machine only fires it
 * later, so these hold however slow the host is.
 */
static void test_coalesce(void)
{
    guint before = qs_heap_trim_count();
    gint64 t0, t1, due0, due1, limit;
    gpointer blocks[64];

    g_assert_cmpint(qs_heap_trim_due_us(), ==, -1);
    /* Something to give back: 64 freed blocks below the mmap threshold. */
    for (guint i = 0; i < G_N_ELEMENTS(blocks); i++) {
        blocks[i] = g_malloc(64 * 1024);
    }
    for (guint i = 0; i < G_N_ELEMENTS(blocks); i++) {
        g_free(blocks[i]);
    }
    t0 = g_get_monotonic_time();
    qs_heap_trim_soon();
    due0 = qs_heap_trim_due_us();
    g_assert_cmpint(due0, >=, t0 + (gint64)QS_HEAP_TRIM_DELAY_MS * 1000);
    g_usleep(2000);
    /* A second request restarts the delay from itself: still one timer. */
    t1 = g_get_monotonic_time();
    qs_heap_trim_soon();
    due1 = qs_heap_trim_due_us();
    g_assert_cmpint(due1, >=, t1 + (gint64)QS_HEAP_TRIM_DELAY_MS * 1000);
    g_assert_cmpint(due1, >, due0);
    g_assert_cmpuint(qs_heap_trim_count(), ==, before);

    limit = g_get_monotonic_time() + LIVENESS_US;
    while (qs_heap_trim_count() == before) {
        g_assert_cmpint(g_get_monotonic_time(), <, limit);
        g_main_context_iteration(NULL, TRUE);
    }
    /* One trim, not before its due time, and nothing left to fire. */
    g_assert_cmpint(g_get_monotonic_time(), >=, due1);
    g_assert_cmpuint(qs_heap_trim_count(), ==, before + 1);
    g_assert_cmpint(qs_heap_trim_due_us(), ==, -1);
    g_assert_false(g_main_context_pending(NULL));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/util/heap-trim/coalesce", test_coalesce);
    return g_test_run();
}
