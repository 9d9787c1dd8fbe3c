/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the screen's consumer side: per-consumer damage, change
 * callbacks, heat on a fake clock, and producer/consumer threads. */

#include "screen-test-util.h"

#define T0 10000000 /* fake clock start, us */

static QsScreen *screen_with(uint32_t w, uint32_t h, uint32_t seed)
{
    QsScreen *screen = qs_screen_new();
    g_autofree uint8_t *img = make_image(w, h, w * 4, seed);
    g_autoptr(GError) error = NULL;

    g_assert_true(qs_screen_scanout(screen, w, h, w * 4, XRGB, img,
                                    (size_t)w * h * 4, T0, &error));
    g_assert_no_error(error);
    return screen;
}

/* Paints a w x h rectangle at x,y with `seed`'s pattern. */
static void paint(QsScreen *screen, int32_t x, int32_t y, int32_t w,
                  int32_t h, uint32_t seed, int64_t now)
{
    g_autofree uint8_t *img = make_image(w, h, w * 4, seed);
    g_autoptr(GError) error = NULL;

    g_assert_true(qs_screen_update(screen, x, y, w, h, w * 4, XRGB, img,
                                   (size_t)w * h * 4, now, &error));
    g_assert_no_error(error);
}

static void assert_rect(const QsRect *r, int32_t x, int32_t y,
                        int32_t w, int32_t h)
{
    if (r->x != x || r->y != y || r->width != w || r->height != h) {
        g_error("rect %dx%d at %d,%d, want %dx%d at %d,%d", r->width,
                r->height, r->x, r->y, w, h, x, y);
    }
}

static void test_watch_accumulate(void)
{
    g_autoptr(QsScreen) screen = screen_with(100, 70, 1);
    g_autoptr(QsScreenWatch) a = qs_screen_watch_new(screen);
    g_autoptr(QsScreenWatch) b = qs_screen_watch_new(screen);
    g_autoptr(QsScreenDamage) d = NULL;
    g_autoptr(GArray) rects = NULL;

    /* Both start with the whole surface. */
    d = qs_screen_watch_take(a);
    g_assert_true(d->new_surface);
    g_assert_cmpuint(d->n_damaged, ==, 7 * 5);
    g_clear_pointer(&d, qs_screen_damage_free);
    g_assert_null(qs_screen_watch_take(a));

    paint(screen, 0, 0, 10, 10, 2, T0 + 1);        /* block 0,0 */
    d = qs_screen_watch_take(a);
    g_assert_false(d->new_surface);
    g_assert_cmpuint(d->n_damaged, ==, 1);
    g_clear_pointer(&d, qs_screen_damage_free);

    paint(screen, 96, 64, 4, 6, 3, T0 + 2);        /* block 6,4 */
    paint(screen, 32, 16, 32, 32, 4, T0 + 3);      /* blocks 2-3,1-2 */
    /* a: the two since its take; b: everything, as it never took. */
    d = qs_screen_watch_take(a);
    g_assert_cmpuint(d->n_damaged, ==, 5);
    g_assert_cmpint(d->newest_us, ==, T0 + 3);
    rects = qs_screen_damage_rects(d);
    g_assert_cmpuint(rects->len, ==, 2);
    assert_rect(&g_array_index(rects, QsRect, 0), 32, 16, 32, 32);
    /* The last block column and row are clipped to 100x70. */
    assert_rect(&g_array_index(rects, QsRect, 1), 96, 64, 4, 6);
    g_clear_pointer(&d, qs_screen_damage_free);
    d = qs_screen_watch_take(b);
    g_assert_true(d->new_surface);
    g_assert_cmpuint(d->n_damaged, ==, 35);
    g_clear_pointer(&rects, g_array_unref);
    rects = qs_screen_damage_rects(d);
    g_assert_cmpuint(rects->len, ==, 1);
    assert_rect(&g_array_index(rects, QsRect, 0), 0, 0, 100, 70);
    g_clear_pointer(&d, qs_screen_damage_free);
    g_assert_null(qs_screen_watch_take(a));
    g_assert_null(qs_screen_watch_take(b));
    /* Painting the same pixels again is no change. */
    paint(screen, 32, 16, 32, 32, 4, T0 + 4);
    g_assert_null(qs_screen_watch_take(a));
}

static void test_watch_rects(void)
{
    QsScreenDamage d = { .width = 80, .height = 64, .blocks_x = 5,
                         .blocks_y = 4 };
    /* An L and a separate block:
     *   X X . . X
     *   X . . . .
     *   X . . . .
     *   . . . . . */
    uint8_t map[20] = { 1, 1, 0, 0, 1,  1, 0, 0, 0, 0,  1, 0, 0, 0, 0 };
    g_autoptr(GArray) rects = NULL;

    d.damaged = map;
    rects = qs_screen_damage_rects(&d);
    g_assert_cmpuint(rects->len, ==, 3);
    assert_rect(&g_array_index(rects, QsRect, 0), 0, 0, 32, 16);
    assert_rect(&g_array_index(rects, QsRect, 1), 64, 0, 16, 16);
    assert_rect(&g_array_index(rects, QsRect, 2), 0, 16, 16, 32);
}

static void on_changed(QsScreen *screen, gpointer user_data)
{
    QsScreenInfo info;

    /* Consumers may be called from the callback. */
    qs_screen_get_info(screen, &info);
    g_atomic_int_inc((int *)user_data);
}

static void test_watch_callback(void)
{
    g_autoptr(QsScreen) screen = screen_with(64, 64, 1);
    int calls = 0;
    guint id = qs_screen_add_changed_func(screen, on_changed, &calls);
    g_autoptr(GError) error = NULL;

    paint(screen, 0, 0, 8, 8, 2, T0 + 1);
    g_assert_cmpint(calls, ==, 1);
    paint(screen, 0, 0, 8, 8, 2, T0 + 2);          /* no change */
    g_assert_cmpint(calls, ==, 1);
    g_assert_false(qs_screen_update(screen, 0, 0, 8, 8, 1, XRGB,
                                    (uint8_t *)"", 1, T0, &error));
    g_assert_cmpint(calls, ==, 1);
    g_assert_true(qs_screen_resize(screen, 32, 32, T0 + 3, &error));
    g_assert_cmpint(calls, ==, 2);
    qs_screen_disable(screen);
    g_assert_cmpint(calls, ==, 3);
    qs_screen_remove_changed_func(screen, id);
    g_assert_true(qs_screen_resize(screen, 32, 32, T0 + 4, &error));
    g_assert_cmpint(calls, ==, 3);
}

/* The rig's activity: a 640x480 area at 624,160 of a 1280x800 plane that
 * the guest flushes whole at 30 Hz. Returns the time its blocks became
 * hot, or -1. */
#define AREA_X 624
#define AREA_Y 160

static void flush_frame(QsScreen *screen, uint8_t *plane, uint32_t frame,
                        int64_t now)
{
    g_autoptr(GError) error = NULL;

    for (uint32_t y = AREA_Y; y < AREA_Y + 480; y++) {
        for (uint32_t x = AREA_X; x < AREA_X + 640; x++) {
            set_pixel(plane, 1280 * 4, x, y, (x + frame * 7) ^ (y << 8));
        }
    }
    g_assert_true(qs_screen_scanout(screen, 1280, 800, 1280 * 4, XRGB, plane,
                                    1280 * 800 * 4, now, &error));
    g_assert_no_error(error);
}

static gboolean area_all_hot(const QsScreenHeat *heat)
{
    for (uint32_t by = AREA_Y / 16; by < (AREA_Y + 480) / 16; by++) {
        for (uint32_t bx = AREA_X / 16; bx < (AREA_X + 640) / 16; bx++) {
            if (!heat->hot[by * heat->blocks_x + bx]) {
                return FALSE;
            }
        }
    }
    return TRUE;
}

static void test_heat_video(void)
{
    g_autoptr(QsScreen) screen = screen_with(1280, 800, 1);
    g_autofree uint8_t *plane = make_image(1280, 800, 1280 * 4, 1);
    int64_t start = T0 + 500000, hot_at = -1, now = start;
    uint32_t frame;

    for (frame = 0; frame < 45; frame++) {
        g_autoptr(QsScreenHeat) heat = NULL;

        now = start + frame * 1000000 / 30;
        flush_frame(screen, plane, frame, now);
        heat = qs_screen_heat_snapshot(screen, now);
        /* Only the area's blocks: 40x30 of them. */
        g_assert_cmpuint(heat->n_hot, <=, 40 * 30);
        if (heat->n_hot) {
            g_assert_true(area_all_hot(heat));
            g_assert_cmpuint(heat->n_hot, ==, 40 * 30);
            assert_rect(&heat->hot_blocks, AREA_X, AREA_Y, 640, 480);
            assert_rect(&heat->hot_pixels, AREA_X, AREA_Y, 640, 480);
            if (hot_at < 0) {
                hot_at = now;
            }
        } else {
            g_assert_cmpint(hot_at, <, 0);
        }
    }
    g_assert_cmpint(hot_at, >=, 0);
    g_test_message("hot after %" G_GINT64_FORMAT " ms",
                   (hot_at - start) / 1000);
    g_assert_cmpint(hot_at - start, <=, 300000);
    /* The guest keeps flushing the whole, now static, plane: heat decays. */
    for (uint32_t i = 1; i <= 40; i++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(QsScreenHeat) heat = NULL;
        int64_t t = now + i * 1000000 / 30;

        g_assert_true(qs_screen_scanout(screen, 1280, 800, 1280 * 4, XRGB,
                                        plane, 1280 * 800 * 4, t, &error));
        heat = qs_screen_heat_snapshot(screen, t);
        if (t - now > QS_SCREEN_HEAT_MAX_GAP_US) {
            g_assert_cmpuint(heat->n_hot, ==, 0);
        }
        if (t - now > (QS_SCREEN_HEAT_BUCKETS + 1) * QS_SCREEN_HEAT_BUCKET_US) {
            /* Nothing counted in the window any more. */
            for (uint32_t b = 0; b < heat->blocks_x * heat->blocks_y; b++) {
                g_assert_cmpuint(heat->counts[b], ==, 0);
                g_assert_cmpint(heat->changed[b].width, ==, 0);
            }
        }
    }
}

/* Change below 8 per second (typing, a clock) never gets hot, however
 * long it lasts; a static area never does. */
static void test_heat_slow(void)
{
    g_autoptr(QsScreen) screen = screen_with(320, 240, 1);

    for (uint32_t i = 0; i < 60; i++) {
        int64_t now = T0 + 1000000 + (int64_t)i * 1000000 / 7;
        g_autoptr(QsScreenHeat) heat = NULL;

        paint(screen, 16, 16, 9, 16, i + 2, now);
        heat = qs_screen_heat_snapshot(screen, now);
        g_assert_cmpuint(heat->n_hot, ==, 0);
        g_assert_cmpint(heat->hot_blocks.width, ==, 0);
        g_assert_cmpuint(heat->counts[1 * heat->blocks_x + 1], <=, 7);
        g_assert_cmpuint(heat->counts[0], ==, 0);
    }
}

/* Many rectangles of one flush sharing a block count once. */
static void test_heat_one_flush(void)
{
    g_autoptr(QsScreen) screen = screen_with(64, 64, 1);
    g_autoptr(QsScreenHeat) heat = NULL;

    for (uint32_t i = 0; i < 20; i++) {
        paint(screen, i % 16, 0, 1, 1, i + 5, T0 + 1000000 + i * 100);
    }
    heat = qs_screen_heat_snapshot(screen, T0 + 1000000 + 2000);
    g_assert_cmpuint(heat->counts[0], ==, 1);
    g_assert_cmpuint(heat->n_hot, ==, 0);
    assert_rect(&heat->changed[0], 0, 0, 16, 1);
}

/* Threads: one producer, consumers that take damage, read pixels and heat
 * meanwhile; at the end the screen holds exactly the producer's last image. */
typedef struct {
    QsScreen *screen;
    gint stop;
    uint8_t *model;     /* 256x256, producer's idea of the screen */
    gint callbacks;
} Shared;

static gpointer producer_thread(gpointer data)
{
    Shared *sh = data;
    GRand *rand = g_rand_new_with_seed(42);

    for (int i = 0; i < 3000; i++) {
        int32_t w = g_rand_int_range(rand, 1, 200);
        int32_t h = g_rand_int_range(rand, 1, 200);
        int32_t x = g_rand_int_range(rand, 0, 256 - w + 1);
        int32_t y = g_rand_int_range(rand, 0, 256 - h + 1);
        g_autofree uint8_t *img = make_image(w, h, w * 4, i);
        g_autoptr(GError) error = NULL;

        if (i % 500 == 250) {
            /* A resize and back: consumers meet a new serial. */
            g_assert_true(qs_screen_resize(sh->screen, 128, 128, i, &error));
            g_assert_true(qs_screen_scanout(sh->screen, 256, 256, 1024, XRGB,
                                            sh->model, 1024 * 256, i,
                                            &error));
        }
        g_assert_true(qs_screen_update(sh->screen, x, y, w, h, w * 4, ARGB,
                                       img, (size_t)w * h * 4,
                                       (int64_t)i * 5000, &error));
        g_assert_no_error(error);
        for (int32_t r = 0; r < h; r++) {
            memcpy(sh->model + (size_t)(y + r) * 1024 + x * 4,
                   img + (size_t)r * w * 4, (size_t)w * 4);
        }
    }
    g_rand_free(rand);
    g_atomic_int_set(&sh->stop, 1);
    return NULL;
}

/* Mirrors the screen from its damage alone, as an encoder would: at the
 * end the mirror must equal the producer's image, so no damage was lost. */
static gboolean mirror_take(Shared *sh, QsScreenWatch *watch, uint8_t *mirror)
{
    g_autoptr(QsScreenDamage) d = qs_screen_watch_take(watch);
    g_autoptr(GArray) rects = NULL;

    if (!d || !d->enabled || d->width != 256 || d->height != 256) {
        /* No surface, or the short-lived 128x128 one: the next new surface
         * brings everything again. */
        return d != NULL;
    }
    rects = qs_screen_damage_rects(d);
    for (guint i = 0; i < rects->len; i++) {
        QsRect *r = &g_array_index(rects, QsRect, i);
        g_autoptr(GError) error = NULL;

        if (!qs_screen_read(sh->screen, d->serial, r,
                            mirror + (size_t)r->y * 1024 + r->x * 4, 1024,
                            &error)) {
            /* Only a newer surface may refuse a read. */
            g_assert_error(error, QS_SCREEN_ERROR, QS_SCREEN_ERROR_STALE);
        }
    }
    return TRUE;
}

static gpointer consumer_thread(gpointer data)
{
    Shared *sh = data;
    g_autoptr(QsScreenWatch) watch = qs_screen_watch_new(sh->screen);
    uint8_t *mirror = g_malloc0(256 * 256 * 4);
    int64_t t = 0;

    while (!g_atomic_int_get(&sh->stop)) {
        g_autoptr(QsScreenHeat) heat = qs_screen_heat_snapshot(sh->screen,
                                                               t += 3000);

        g_assert_nonnull(heat);
        mirror_take(sh, watch, mirror);
    }
    /* The producer is done: one last take brings the mirror up to date. */
    mirror_take(sh, watch, mirror);
    g_assert_false(mirror_take(sh, watch, mirror));
    return mirror;
}

static void count_callback(QsScreen *screen, gpointer user_data)
{
    Shared *sh = user_data;

    (void)screen;
    g_atomic_int_inc(&sh->callbacks);
}

static void test_threads_smoke(void)
{
    Shared sh = { 0 };
    GThread *threads[3];

    sh.screen = screen_with(256, 256, 1);
    sh.model = make_image(256, 256, 1024, 1);
    qs_screen_add_changed_func(sh.screen, count_callback, &sh);
    threads[0] = g_thread_new("producer", producer_thread, &sh);
    threads[1] = g_thread_new("consumer1", consumer_thread, &sh);
    threads[2] = g_thread_new("consumer2", consumer_thread, &sh);
    g_thread_join(threads[0]);
    for (guint i = 1; i < G_N_ELEMENTS(threads); i++) {
        g_autofree uint8_t *mirror = g_thread_join(threads[i]);

        /* The X byte is 0 in the mirror, not in the model. */
        for (size_t p = 0; p < 256 * 256; p++) {
            g_assert_cmphex(pixel_at(mirror, 1024, p % 256, p / 256), ==,
                            pixel_at(sh.model, 1024, p % 256, p / 256) &
                            0x00ffffffu);
        }
    }
    assert_screen_is(sh.screen, sh.model, 1024);
    g_assert_cmpint(g_atomic_int_get(&sh.callbacks), >, 100);
    qs_screen_free(sh.screen);
    g_free(sh.model);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/screen/watch/accumulate", test_watch_accumulate);
    g_test_add_func("/screen/watch/rects", test_watch_rects);
    g_test_add_func("/screen/watch/callback", test_watch_callback);
    g_test_add_func("/screen/heat/video", test_heat_video);
    g_test_add_func("/screen/heat/slow", test_heat_slow);
    g_test_add_func("/screen/heat/one-flush", test_heat_one_flush);
    g_test_add_func("/screen/threads/smoke", test_threads_smoke);
    return g_test_run();
}
