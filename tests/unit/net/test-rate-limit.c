/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the per-source link rate limit (qs-rate-limit.c) on a fake
 * clock. */

#include <glib.h>
#include "net/qs-rate-limit.h"

#define MS (G_GINT64_CONSTANT(1000))
#define S (G_GINT64_CONSTANT(1000000))

/* How many attempts `source` gets through at `now`, out of `tries`. */
static guint take_n(QsRateLimit *rl, const char *source, gint64 now,
                    guint tries)
{
    guint n = 0;

    for (guint i = 0; i < tries; i++) {
        n += qs_rate_limit_take(rl, source, now) ? 1 : 0;
    }
    return n;
}

static void test_burst_then_rate(void)
{
    QsRateLimit *rl = qs_rate_limit_new(10, 3, 16);
    gint64 t = 1000 * S;

    /* A new source has a full bucket: the burst, then nothing. */
    g_assert_cmpuint(take_n(rl, "10.0.0.1", t, 10), ==, 3);
    /* 10 per second: one more after 100 ms, not after 99 ms. */
    g_assert_false(qs_rate_limit_take(rl, "10.0.0.1", t + 99 * MS));
    g_assert_true(qs_rate_limit_take(rl, "10.0.0.1", t + 100 * MS));
    g_assert_false(qs_rate_limit_take(rl, "10.0.0.1", t + 100 * MS));
    /* A refused attempt costs nothing: 100 ms later one goes through. */
    g_assert_true(qs_rate_limit_take(rl, "10.0.0.1", t + 200 * MS));
    /* A long pause refills up to the burst, never beyond. */
    g_assert_cmpuint(take_n(rl, "10.0.0.1", t + 3600 * S, 10), ==, 3);
    qs_rate_limit_free(rl);
}

static void test_steady_flood(void)
{
    QsRateLimit *rl = qs_rate_limit_new(10, 30, 16);
    gint64 t = 5 * S;
    guint ok = 0;

    /* 1000 attempts over 10 s: the burst plus 10 per second. */
    for (guint i = 0; i < 1000; i++) {
        ok += qs_rate_limit_take(rl, "192.0.2.7", t + i * 10 * MS) ? 1 : 0;
    }
    g_assert_cmpuint(ok, >=, 30 + 99);
    g_assert_cmpuint(ok, <=, 30 + 101);
    qs_rate_limit_free(rl);
}

static void test_sources_independent(void)
{
    QsRateLimit *rl = qs_rate_limit_new(1, 4, 16);

    /* A flood from one source does not touch another's budget. */
    g_assert_cmpuint(take_n(rl, "127.0.0.2", 0, 1000), ==, 4);
    g_assert_cmpuint(take_n(rl, "127.0.0.1", 0, 4), ==, 4);
    g_assert_false(qs_rate_limit_take(rl, "127.0.0.1", 0));
    g_assert_cmpuint(qs_rate_limit_get_n_sources(rl), ==, 2);
    qs_rate_limit_free(rl);
}

static void test_refund(void)
{
    QsRateLimit *rl = qs_rate_limit_new(1, 4, 16);

    /* Linked connections give their attempt back: a client that links
     * every channel never runs dry. */
    for (guint i = 0; i < 100; i++) {
        g_assert_true(qs_rate_limit_take(rl, "10.1.1.1", 0));
        qs_rate_limit_refund(rl, "10.1.1.1", 0);
    }
    /* Refunds never fill beyond the burst. */
    qs_rate_limit_refund(rl, "10.1.1.1", 0);
    qs_rate_limit_refund(rl, "10.1.1.1", 0);
    g_assert_cmpuint(take_n(rl, "10.1.1.1", 0, 10), ==, 4);
    /* One refund, one more attempt. */
    qs_rate_limit_refund(rl, "10.1.1.1", 0);
    g_assert_cmpuint(take_n(rl, "10.1.1.1", 0, 10), ==, 1);
    /* A refund for a source not in the table is harmless. */
    qs_rate_limit_refund(rl, "10.9.9.9", 0);
    g_assert_cmpuint(qs_rate_limit_get_n_sources(rl), ==, 1);
    qs_rate_limit_free(rl);
}

static void test_table_bounded(void)
{
    QsRateLimit *rl = qs_rate_limit_new(1, 2, 8);
    gint64 t = 0;

    /* Many sources at once: the table never exceeds its bound, and the
     * source that keeps flooding stays in it (least recently charged goes
     * first), so it stays limited. */
    g_assert_cmpuint(take_n(rl, "flood", t, 2), ==, 2);
    for (guint i = 0; i < 1000; i++) {
        g_autofree char *src = g_strdup_printf("10.2.%u.%u", i / 256, i % 256);

        g_assert_false(qs_rate_limit_take(rl, "flood", t));
        g_assert_true(qs_rate_limit_take(rl, src, t));
        g_assert_cmpuint(qs_rate_limit_get_n_sources(rl), <=, 8);
    }
    qs_rate_limit_free(rl);
}

static void test_refilled_forgotten(void)
{
    QsRateLimit *rl = qs_rate_limit_new(10, 5, 64);

    for (guint i = 0; i < 20; i++) {
        g_autofree char *src = g_strdup_printf("198.51.100.%u", i);

        g_assert_cmpuint(take_n(rl, src, 0, 6), ==, 5);
    }
    g_assert_cmpuint(qs_rate_limit_get_n_sources(rl), ==, 20);
    /* After 500 ms every bucket is full again: each new attempt forgets
     * one refilled source, so the table drains without a timer. */
    for (guint i = 0; i < 40; i++) {
        g_assert_true(qs_rate_limit_take(rl, "203.0.113.1", 500 * MS + i));
        qs_rate_limit_refund(rl, "203.0.113.1", 500 * MS + i);
    }
    g_assert_cmpuint(qs_rate_limit_get_n_sources(rl), ==, 1);
    qs_rate_limit_free(rl);
}

static void test_clock_backwards(void)
{
    QsRateLimit *rl = qs_rate_limit_new(10, 2, 16);

    g_assert_cmpuint(take_n(rl, "a", 10 * S, 2), ==, 2);
    /* An earlier time refills nothing, and does not move the reference
     * back (which would grant credit on the way forward again). */
    g_assert_false(qs_rate_limit_take(rl, "a", 5 * S));
    g_assert_false(qs_rate_limit_take(rl, "a", 10 * S + 99 * MS));
    g_assert_true(qs_rate_limit_take(rl, "a", 10 * S + 100 * MS));
    qs_rate_limit_free(rl);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/net/rate-limit/burst-then-rate", test_burst_then_rate);
    g_test_add_func("/net/rate-limit/steady-flood", test_steady_flood);
    g_test_add_func("/net/rate-limit/sources-independent",
                    test_sources_independent);
    g_test_add_func("/net/rate-limit/refund", test_refund);
    g_test_add_func("/net/rate-limit/table-bounded", test_table_bounded);
    g_test_add_func("/net/rate-limit/refilled-forgotten",
                    test_refilled_forgotten);
    g_test_add_func("/net/rate-limit/clock-backwards", test_clock_backwards);
    return g_test_run();
}
