/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Which delivery spans measured a sender that ran dry, and which the link. */
#include "flow/qs-idle-marks.h"

/* A span is limited when a mark lies in [first, last): bytes written
 * before the sender ran dry drained at the link's pace. */
static void test_span(void)
{
    QsIdleMarks m = { 0 };

    g_assert_false(qs_idle_marks_span_limited(&m, 0, 1000));
    qs_idle_marks_add(&m, 5000);
    /* All of the span was written before the gap: the link's. */
    g_assert_false(qs_idle_marks_span_limited(&m, 1000, 5000));
    g_assert_false(qs_idle_marks_span_limited(&m, 0, 4000));
    /* The gap lies within, or right at its start. */
    g_assert_true(qs_idle_marks_span_limited(&m, 1000, 5001));
    g_assert_true(qs_idle_marks_span_limited(&m, 5000, 9000));
    /* Written after the gap and delivered without another. */
    g_assert_false(qs_idle_marks_span_limited(&m, 5001, 9000));
    /* Idle again with nothing written: still the one gap. */
    qs_idle_marks_add(&m, 5000);
    g_assert_cmpuint(m.len, ==, 1);
    qs_idle_marks_add(&m, 8000);
    g_assert_true(qs_idle_marks_span_limited(&m, 6000, 9000));
    g_assert_false(qs_idle_marks_span_limited(&m, 5500, 7500));
    qs_idle_marks_clear(&m);
    g_assert_false(qs_idle_marks_span_limited(&m, 1000, 9000));
}

/* Marks the ring dropped still limit the spans reaching back to them;
 * spans after them are judged on the marks kept. */
static void test_ring(void)
{
    QsIdleMarks m = { 0 };

    for (uint64_t i = 1; i <= 3 * QS_IDLE_MARKS; i++) {
        qs_idle_marks_add(&m, i * 1000);
    }
    g_assert_cmpuint(m.len, ==, QS_IDLE_MARKS);
    /* 1000 .. 32000 dropped, 33000 .. 48000 kept. */
    g_assert_true(qs_idle_marks_span_limited(&m, 500, 800));
    g_assert_true(qs_idle_marks_span_limited(&m, 32000, 32500));
    g_assert_false(qs_idle_marks_span_limited(&m, 32001, 32500));
    g_assert_true(qs_idle_marks_span_limited(&m, 40000, 40001));
    g_assert_false(qs_idle_marks_span_limited(&m, 48001, 90000));
    /* A counter gone back is a new stream: what it knew is gone. */
    qs_idle_marks_add(&m, 10);
    g_assert_cmpuint(m.len, ==, 1);
    g_assert_false(qs_idle_marks_span_limited(&m, 0, 10));
    g_assert_true(qs_idle_marks_span_limited(&m, 0, 11));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/flow/idle-marks/span", test_span);
    g_test_add_func("/flow/idle-marks/ring", test_ring);
    return g_test_run();
}
