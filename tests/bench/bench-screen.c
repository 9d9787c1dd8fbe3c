/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Micro-benchmark of the screen's copy and diff: prints mean/p50/p95 time of
 * one producer call per case (budget: full plane 1280x800 <= 1500 us). */

#include "qs-screen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define W 1280
#define H 800
#define ROUNDS 300

/* CPU time of this thread: the cost on one core, which is what the budget
 * is about, without the time other processes (this machine is shared) hold
 * the core. Wall time is printed too. */
static int64_t clock_ns(clockid_t clock)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

static uint8_t *image(uint32_t w, uint32_t h, uint32_t seed)
{
    uint8_t *buf = g_malloc((size_t)w * h * 4);
    uint32_t v = seed * 2654435761u + 1;

    for (size_t i = 0; i < (size_t)w * h; i++) {
        v ^= v << 13;
        v ^= v >> 17;
        v ^= v << 5;
        memcpy(buf + i * 4, &v, 4);
    }
    return buf;
}

typedef enum {
    CALL_SCANOUT,
    CALL_UPDATE,
    CALL_MAP,
} Call;

/* Times ROUNDS calls that alternate between frames a and b. */
static void run_case(const char *name, Call call, const uint8_t *a,
                     const uint8_t *b, int32_t x, int32_t y, int32_t w,
                     int32_t h)
{
    g_autoptr(QsScreen) screen = qs_screen_new();
    g_autofree uint8_t *plane = image(W, H, 99);
    g_autoptr(GError) error = NULL;
    int64_t t[ROUNDS], wall[ROUNDS], sum = 0;

    if (!qs_screen_scanout(screen, W, H, W * 4, QS_PIXMAN_X8R8G8B8, plane,
                           (size_t)W * H * 4, 0, &error)) {
        g_error("%s", error->message);
    }
    for (int i = -10; i < ROUNDS; i++) {
        const uint8_t *src = (i & 1) ? b : a;
        int64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        int64_t w0 = clock_ns(CLOCK_MONOTONIC);
        gboolean ok;

        switch (call) {
        case CALL_SCANOUT:
            ok = qs_screen_scanout(screen, W, H, W * 4, QS_PIXMAN_X8R8G8B8,
                                   src, (size_t)W * H * 4, i * 33000, &error);
            break;
        case CALL_UPDATE:
            ok = qs_screen_update(screen, x, y, w, h, w * 4,
                                  QS_PIXMAN_X8R8G8B8, src, (size_t)w * h * 4,
                                  i * 33000, &error);
            break;
        default:
            ok = qs_screen_update_from_map(screen, src, (size_t)W * H * 4, W,
                                           H, W * 4, QS_PIXMAN_A8R8G8B8, x, y,
                                           w, h, i * 33000, &error);
            break;
        }
        if (!ok) {
            g_error("%s: %s", name, error->message);
        }
        if (i >= 0) {
            t[i] = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
            wall[i] = clock_ns(CLOCK_MONOTONIC) - w0;
            sum += t[i];
        }
    }
    qsort(t, ROUNDS, sizeof(t[0]), cmp_i64);
    qsort(wall, ROUNDS, sizeof(wall[0]), cmp_i64);
    printf("%-38s %8.1f %8.1f %8.1f %10.1f\n", name, sum / 1000.0 / ROUNDS,
           t[ROUNDS / 2] / 1000.0, t[ROUNDS * 95 / 100] / 1000.0,
           wall[ROUNDS / 2] / 1000.0);
}

/* The figures depend on what else runs: print the load next to them. */
static void print_load(const char *when)
{
    g_autofree char *load = NULL;

    if (g_file_get_contents("/proc/loadavg", &load, NULL, NULL)) {
        printf("# load average %s: %s", when, load);
    }
}

int main(void)
{
    g_autofree uint8_t *a = image(W, H, 1);
    g_autofree uint8_t *b = image(W, H, 2);
    g_autofree uint8_t *area = g_memdup2(a, (size_t)W * H * 4);
    g_autofree uint8_t *small_a = image(96, 96, 3);
    g_autofree uint8_t *small_b = image(96, 96, 4);

    /* area = a with a 640x480 block of b at 320,160. */
    for (int y = 160; y < 160 + 480; y++) {
        memcpy(area + ((size_t)y * W + 320) * 4, b + ((size_t)y * W + 320) * 4,
               640 * 4);
    }
    printf("# %d calls per case, %dx%d plane, microseconds of thread CPU time"
           " per call (wall p50 last)\n", ROUNDS, W, H);
    printf("%-38s %8s %8s %8s %10s\n", "case", "mean", "p50", "p95",
           "wall-p50");
    print_load("before");
    run_case("full-plane scanout, unchanged", CALL_SCANOUT, a, a, 0, 0, W, H);
    run_case("full-plane scanout, all changed", CALL_SCANOUT, a, b, 0, 0, W,
             H);
    run_case("full-plane scanout, 640x480 changed", CALL_SCANOUT, a, area, 0,
             0, W, H);
    run_case("96x96 update, changed", CALL_UPDATE, small_a, small_b, 600, 300,
             96, 96);
    run_case("full-plane map update, unchanged", CALL_MAP, a, a, 0, 0, W, H);
    run_case("full-plane map update, all changed", CALL_MAP, a, b, 0, 0, W,
             H);
    print_load("after");
    return 0;
}
