/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The keylat command: key press to changed pixels in a screen rectangle, per sample. */
#include "qs-tc.h"

#include <math.h>
#include <stdio.h>

/* Before the first press the rect must have been left alone this long, so
 * the tail of the initial picture is not taken for the first response. */
#define RECT_QUIET_US (300 * 1000)
#define RECT_QUIET_MAX_US (3 * G_USEC_PER_SEC)
/* Before each press: qemu's SPICE may deliver one repaint as several draws;
 * a press right after the first part would take the rest as its response. */
#define SAMPLE_QUIET_US (50 * 1000)
#define SAMPLE_QUIET_MAX_US G_USEC_PER_SEC

typedef struct {
    int x, y, w, h;            /* the rect clipped to the surface */
    int bpp;
    guint8 *before;            /* the rect's raw surface bytes before the press */
    gboolean armed;
    gboolean hit;
    gint64 t_hit;
    gint64 t_last_touch;       /* last invalidate intersecting the rect */
} Keylat;

static int bytes_per_pixel(int format)
{
    switch (format) {
    case SPICE_SURFACE_FMT_32_xRGB:
    case SPICE_SURFACE_FMT_32_ARGB:
        return 4;
    case SPICE_SURFACE_FMT_16_555:
    case SPICE_SURFACE_FMT_16_565:
        return 2;
    default:
        return 0;
    }
}

/* Copies (to != NULL) or compares (to == NULL) the rect; TRUE if it differs. */
static gboolean rect_bytes(Keylat *k, const SpiceDisplayPrimary *p, guint8 *to)
{
    gsize row = (gsize)k->w * (gsize)k->bpp;

    for (int r = 0; r < k->h; r++) {
        const guint8 *src = p->data + (gsize)(k->y + r) * (gsize)p->stride + (gsize)k->x * (gsize)k->bpp;

        if (to)
            memcpy(to + (gsize)r * row, src, row);
        else if (memcmp(k->before + (gsize)r * row, src, row) != 0)
            return TRUE;
    }
    return FALSE;
}

static void on_invalidate(QsTc *tc, int x, int y, int w, int h, gpointer data)
{
    Keylat *k = data;
    SpiceDisplayPrimary p;

    if (x >= k->x + k->w || y >= k->y + k->h || x + w <= k->x || y + h <= k->y)
        return;
    k->t_last_touch = g_get_monotonic_time();
    if (!k->armed)
        return;
    /* a resize moves the surface under us; the stale rect cannot be compared */
    if (!qs_tc_primary(tc, &p) || bytes_per_pixel(p.format) != k->bpp ||
        p.width < k->x + k->w || p.height < k->y + k->h)
        return;
    if (rect_bytes(k, &p, NULL)) {
        k->t_hit = g_get_monotonic_time();
        k->hit = TRUE;
        k->armed = FALSE;
    }
}

static gboolean hit_cond(QsTc *tc, gpointer data)
{
    (void)tc;
    return ((Keylat *)data)->hit;
}

typedef struct {
    Keylat *k;
    gint64 quiet_us;
} QuietWait;

static gboolean rect_quiet(QsTc *tc, gpointer data)
{
    QuietWait *q = data;

    (void)tc;
    return g_get_monotonic_time() - q->k->t_last_touch >= q->quiet_us;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted values. */
static double percentile(const double *v, guint n, double pct)
{
    guint rank = (guint)ceil(pct / 100.0 * n);

    return v[rank ? rank - 1 : 0];
}

int qs_tc_cmd_keylat(QsTc *tc, const QsTcKeylatOpts *o)
{
    SpiceDisplayPrimary p;
    Keylat k = { 0 };
    g_autofree double *lat = NULL;
    guint ok = 0, timeouts = 0;
    double sum = 0;
    gint64 next_press;

    if (!tc->inputs) {
        qs_tc_fail(tc, QS_TC_EXIT_UNSUPPORTED, "keylat: the server offers no inputs channel");
        return tc->fail_status;
    }
    if (!qs_tc_primary(tc, &p) || !(k.bpp = bytes_per_pixel(p.format))) {
        qs_tc_fail(tc, QS_TC_EXIT_UNSUPPORTED, "keylat: no usable primary surface");
        return tc->fail_status;
    }
    k.x = CLAMP(o->x, 0, p.width);
    k.y = CLAMP(o->y, 0, p.height);
    k.w = CLAMP(o->w, 0, p.width - k.x);
    k.h = CLAMP(o->h, 0, p.height - k.y);
    if (k.w == 0 || k.h == 0) {
        qs_tc_fail(tc, QS_TC_EXIT_USAGE, "keylat: rect %d,%d,%d,%d is outside the %dx%d surface",
                   o->x, o->y, o->w, o->h, p.width, p.height);
        return tc->fail_status;
    }
    k.before = g_malloc((gsize)k.w * (gsize)k.h * (gsize)k.bpp);
    lat = g_new0(double, MAX(o->count, 1));
    tc->on_invalidate = on_invalidate;
    tc->on_invalidate_data = &k;

    /* an animated rect never goes quiet; then measure anyway and let the
     * caller judge, as every sample would be "the next frame" */
    k.t_last_touch = g_get_monotonic_time();
    if (!qs_tc_wait(tc, rect_quiet, &(QuietWait){ &k, RECT_QUIET_US }, RECT_QUIET_MAX_US) &&
        !tc->fail_status)
        g_printerr("warning: keylat: rect %d,%d,%d,%d keeps changing without key presses\n",
                   k.x, k.y, k.w, k.h);
    next_press = g_get_monotonic_time();
    for (int i = 0; i < o->count && !tc->fail_status; i++) {
        gint64 now = g_get_monotonic_time(), t0;

        if (next_press > now)
            qs_tc_wait(tc, NULL, NULL, next_press - now);
        qs_tc_wait(tc, rect_quiet, &(QuietWait){ &k, SAMPLE_QUIET_US }, SAMPLE_QUIET_MAX_US);
        if (tc->fail_status)
            break;
        if (!qs_tc_primary(tc, &p) || bytes_per_pixel(p.format) != k.bpp ||
            p.width < k.x + k.w || p.height < k.y + k.h) {
            qs_tc_fail(tc, QS_TC_EXIT_UNSUPPORTED, "keylat: primary surface changed under the rect");
            break;
        }
        rect_bytes(&k, &p, k.before);
        k.hit = FALSE;
        k.armed = TRUE;
        t0 = g_get_monotonic_time();
        spice_inputs_channel_key_press_and_release(tc->inputs, o->scancode);
        next_press = t0 + (gint64)o->interval_ms * 1000;

        qs_tc_wait(tc, hit_cond, &k, (gint64)o->sample_timeout_ms * 1000);
        k.armed = FALSE;
        if (tc->fail_status)
            break;
        if (k.hit) {
            lat[ok] = (double)(k.t_hit - t0) / 1000.0;
            sum += lat[ok];
            printf("{\"i\":%d,\"latency_ms\":%.3f}\n", i, lat[ok]);
            ok++;
        } else {
            printf("{\"i\":%d,\"timeout\":true}\n", i);
            timeouts++;
        }
        fflush(stdout);
    }
    tc->on_invalidate = NULL;
    tc->on_invalidate_data = NULL;
    g_free(k.before);
    if (tc->fail_status)
        return tc->fail_status;

    qsort(lat, ok, sizeof(double), cmp_double);
    if (ok)
        printf("{\"summary\":true,\"count\":%u,\"ok\":%u,\"timeouts\":%u,\"p50_ms\":%.3f,"
               "\"p95_ms\":%.3f,\"min_ms\":%.3f,\"max_ms\":%.3f,\"mean_ms\":%.3f}\n",
               ok + timeouts, ok, timeouts, percentile(lat, ok, 50), percentile(lat, ok, 95),
               lat[0], lat[ok - 1], sum / ok);
    else
        printf("{\"summary\":true,\"count\":%u,\"ok\":0,\"timeouts\":%u,\"p50_ms\":null,"
               "\"p95_ms\":null,\"min_ms\":null,\"max_ms\":null,\"mean_ms\":null}\n", timeouts, timeouts);
    fflush(stdout);
    if (!ok) {
        qs_tc_fail(tc, QS_TC_EXIT_TIMEOUT, "keylat: the rect never changed after a key press");
        return tc->fail_status;
    }
    return QS_TC_EXIT_OK;
}
