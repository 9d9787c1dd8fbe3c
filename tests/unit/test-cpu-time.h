/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The perf benchmarks' clock: CPU time of the calling thread, in seconds.
 * The machine is shared, so wall time would measure the neighbours. */
#pragma once

#include <time.h>

static inline double qs_test_cpu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}
