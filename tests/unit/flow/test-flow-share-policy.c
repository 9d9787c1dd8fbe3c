/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rules of encoders shared by a console's viewers: rate classes and their margin, a tier's rate, catch-up and going alone, on a fake clock. */
#include "flow/qs-share-policy.h"

/* Classes double from 64 kbit/s: under 128 kbit/s is class 0. */
static void test_rate_class(void)
{
    g_assert_cmpint(qs_share_rate_class(0), ==, 0);
    g_assert_cmpint(qs_share_rate_class(64000), ==, 0);
    g_assert_cmpint(qs_share_rate_class(127999), ==, 0);
    g_assert_cmpint(qs_share_rate_class(128000), ==, 1);
    g_assert_cmpint(qs_share_rate_class(256000), ==, 2);
    g_assert_cmpint(qs_share_rate_class(1000000), ==, 3);
    g_assert_cmpint(qs_share_rate_class(8000000), ==, 6);
    g_assert_cmpint(qs_share_rate_class(8192000), ==, 7);
}

/* A rate leaves its class only beyond 1.41 times its bounds. */
static void test_margin(void)
{
    /* Class 6: 4.096 to 8.192 Mbit/s. */
    g_assert_false(qs_share_outside_class(4096000, 6));
    g_assert_false(qs_share_outside_class(9000000, 6));        /* class 7, within the margin */
    g_assert_false(qs_share_outside_class(2905000, 6));        /* class 5, within the margin */
    g_assert_true(qs_share_outside_class(12000000, 6));
    g_assert_true(qs_share_outside_class(2900000, 6));
    g_assert_false(qs_share_outside_class(11550000, 6));
    g_assert_true(qs_share_outside_class(11551000, 6));
}

/* A shared encoder runs at its viewers' lowest rate; a seat's rate not
 * set yet does not count; with none, the tier's own. */
static void test_tier_rate(void)
{
    const uint32_t three[] = { 8000000, 2000000, 5000000 };
    const uint32_t unset[] = { 0, 3000000 };
    const uint32_t none[] = { 0, 0 };

    g_assert_cmpuint(qs_share_tier_rate(three, 3, 1), ==, 2000000);
    g_assert_cmpuint(qs_share_tier_rate(three, 1, 1), ==, 8000000);
    g_assert_cmpuint(qs_share_tier_rate(unset, 2, 1), ==, 3000000);
    g_assert_cmpuint(qs_share_tier_rate(none, 2, 7000000), ==, 7000000);
    g_assert_cmpuint(qs_share_tier_rate(NULL, 0, 7000000), ==, 7000000);
}

/* More than 4 frames behind among others: it catches up; behind again
 * within 2 s of that, it goes on alone; later than that, it catches up
 * again. */
static void test_catch_up_then_solo(void)
{
    int64_t t0 = 100 * G_USEC_PER_SEC;

    g_assert_cmpint(qs_share_lag(QS_SHARE_CATCH_UP_FRAMES, FALSE, 2, 0, t0), ==, QS_SHARE_KEEP);
    g_assert_cmpint(qs_share_lag(4, FALSE, 2, 0, t0), ==, QS_SHARE_KEEP);
    g_assert_cmpint(qs_share_lag(5, FALSE, 2, 0, t0), ==, QS_SHARE_CATCH_UP);
    /* Caught up at t0: behind again soon after. */
    g_assert_cmpint(qs_share_lag(5, FALSE, 2, t0, t0 + G_USEC_PER_SEC), ==, QS_SHARE_GO_SOLO);
    g_assert_cmpint(qs_share_lag(5, FALSE, 2, t0, t0 + 2 * G_USEC_PER_SEC - 1), ==,
                    QS_SHARE_GO_SOLO);
    g_assert_cmpint(qs_share_lag(5, FALSE, 2, t0, t0 + 2 * G_USEC_PER_SEC), ==,
                    QS_SHARE_CATCH_UP);
    /* Alone, being behind is nobody's cost. */
    g_assert_cmpint(qs_share_lag(6, FALSE, 1, 0, t0), ==, QS_SHARE_KEEP);
}

/* Its frames gone from the tier's ring: alone it starts again at the head;
 * among others, as when behind. */
static void test_lost(void)
{
    int64_t t0 = 100 * G_USEC_PER_SEC;

    g_assert_cmpint(qs_share_lag(12, TRUE, 1, 0, t0), ==, QS_SHARE_RESTART);
    g_assert_cmpint(qs_share_lag(12, TRUE, 3, 0, t0), ==, QS_SHARE_CATCH_UP);
    g_assert_cmpint(qs_share_lag(12, TRUE, 3, t0, t0 + 1), ==, QS_SHARE_GO_SOLO);
}

/* Alone, a seat joins a tier that suits it, else its tier follows it;
 * sharing, it leaves on a rate beyond the margin or another frame rate. */
static void test_move(void)
{
    g_assert_cmpint(qs_share_move(1, TRUE, 950000, 6, 1, 1), ==, QS_SHARE_JOIN);
    g_assert_cmpint(qs_share_move(1, FALSE, 950000, 6, 1, 1), ==, QS_SHARE_FOLLOW);
    g_assert_cmpint(qs_share_move(2, FALSE, 9000000, 6, 1, 1), ==, QS_SHARE_STAY);
    g_assert_cmpint(qs_share_move(2, FALSE, 12000000, 6, 1, 1), ==, QS_SHARE_LEAVE);
    g_assert_cmpint(qs_share_move(2, TRUE, 8000000, 6, 2, 1), ==, QS_SHARE_LEAVE);
}

static void test_enabled(void)
{
    g_assert_true(qs_share_enabled(NULL));
    g_assert_true(qs_share_enabled("1"));
    g_assert_true(qs_share_enabled(""));
    g_assert_false(qs_share_enabled("0"));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/flow/share-policy/rate-class", test_rate_class);
    g_test_add_func("/flow/share-policy/margin", test_margin);
    g_test_add_func("/flow/share-policy/tier-rate", test_tier_rate);
    g_test_add_func("/flow/share-policy/catch-up-then-solo", test_catch_up_then_solo);
    g_test_add_func("/flow/share-policy/lost", test_lost);
    g_test_add_func("/flow/share-policy/move", test_move);
    g_test_add_func("/flow/share-policy/enabled", test_enabled);
    return g_test_run();
}
