/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qs_heap_trim_soon: requests coalesce into one trim, after the delay. */
#include "util/qs-heap-trim.h"

static gboolean quit(gpointer loop)
{
    g_main_loop_quit(loop);
    return G_SOURCE_REMOVE;
}

static void run_for(guint ms)
{
    g_autoptr(GMainLoop) loop = g_main_loop_new(NULL, FALSE);

    g_timeout_add(ms, quit, loop);
    g_main_loop_run(loop);
}

static void test_coalesce(void)
{
    guint before = qs_heap_trim_count();
    gint64 t0 = g_get_monotonic_time();
    gpointer blocks[64];

    /* Something to give back: 64 freed blocks below the mmap threshold. */
    for (guint i = 0; i < G_N_ELEMENTS(blocks); i++) {
        blocks[i] = g_malloc(64 * 1024);
    }
    for (guint i = 0; i < G_N_ELEMENTS(blocks); i++) {
        g_free(blocks[i]);
    }
    qs_heap_trim_soon();
    run_for(QS_HEAP_TRIM_DELAY_MS / 2);
    g_assert_cmpuint(qs_heap_trim_count(), ==, before);
    /* A second request restarts the delay: still one trim. */
    qs_heap_trim_soon();
    run_for(QS_HEAP_TRIM_DELAY_MS * 3 / 4);
    g_assert_cmpuint(qs_heap_trim_count(), ==, before);
    run_for(QS_HEAP_TRIM_DELAY_MS / 2 + 200);
    g_assert_cmpuint(qs_heap_trim_count(), ==, before + 1);
    g_assert_cmpint(g_get_monotonic_time() - t0, >=,
                    (gint64)QS_HEAP_TRIM_DELAY_MS * 1000 * 5 / 4);
    run_for(QS_HEAP_TRIM_DELAY_MS + 200);
    g_assert_cmpuint(qs_heap_trim_count(), ==, before + 1);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/util/heap-trim/coalesce", test_coalesce);
    return g_test_run();
}
