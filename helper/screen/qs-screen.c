/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The screen's producer side: argument checks, surfaces, and the entry points
 * qemu's listener calls; the pixel work is in qs-screen-copy.c. */

#include "qs-screen-private.h"

#include <string.h>

G_DEFINE_QUARK(qs-screen-error-quark, qs_screen_error)

QsScreen *qs_screen_new(void)
{
    QsScreen *screen = g_new0(QsScreen, 1);

    g_mutex_init(&screen->produce_lock);
    g_mutex_init(&screen->lock);
    g_mutex_init(&screen->cb_lock);
    screen->callbacks = g_array_new(FALSE, FALSE, sizeof(QsChangedCallback));
    screen->serial = 1;
    screen->next_cb_id = 1;
    return screen;
}

void qs_surface_free(QsSurface *s)
{
    if (!s) {
        return;
    }
    g_free(s->pixels);
    g_free(s->block_seq);
    g_free(s->block_time);
    g_free(s->heat_counted);
    g_free(s->extent);
    g_free(s->heat_counts);
    g_free(s->heat_total);
    g_free(s->scratch);
    g_free(s->band);
    g_free(s);
}

void qs_screen_free(QsScreen *screen)
{
    if (!screen) {
        return;
    }
    qs_surface_free(screen->surface);
    g_array_unref(screen->callbacks);
    g_mutex_clear(&screen->cb_lock);
    g_mutex_clear(&screen->lock);
    g_mutex_clear(&screen->produce_lock);
    g_free(screen);
}

/* A black surface, every block changed at now_us. Sizes were checked, so
 * only memory can be short; qemu decides the size, so that is an error, not
 * an abort. */
static QsSurface *surface_new(uint32_t width, uint32_t height, int64_t now_us,
                              GError **error)
{
    QsSurface *s = g_new0(QsSurface, 1);
    size_t nblocks;

    s->width = width;
    s->height = height;
    s->blocks_x = qs_blocks(width);
    s->blocks_y = qs_blocks(height);
    nblocks = (size_t)s->blocks_x * s->blocks_y;
    s->pixels = g_try_malloc0((size_t)width * height * 4);
    s->block_seq = g_try_new0(uint64_t, nblocks);
    s->block_time = g_try_new(int64_t, nblocks);
    s->heat_counted = g_try_new(int64_t, nblocks);
    s->extent = g_try_new(QsBlockExtent, nblocks);
    s->heat_counts = g_try_malloc0(nblocks * QS_SCREEN_HEAT_BUCKETS);
    s->heat_total = g_try_new0(uint16_t, nblocks);
    s->scratch = g_try_new(uint32_t, (size_t)width * QS_SCREEN_BLOCK);
    s->band = g_try_new(QsBlockExtent, s->blocks_x);
    if (!s->pixels || !s->block_seq || !s->block_time || !s->heat_counted ||
        !s->extent || !s->heat_counts || !s->heat_total || !s->scratch ||
        !s->band) {
        g_set_error(error, QS_SCREEN_ERROR, QS_SCREEN_ERROR_INVALID,
                    "no memory for a %ux%u surface", width, height);
        qs_surface_free(s);
        return NULL;
    }
    for (size_t i = 0; i < nblocks; i++) {
        s->block_time[i] = now_us;
        s->heat_counted[i] = QS_NEVER;
        s->extent[i] = QS_EXTENT_NONE;
    }
    for (uint32_t i = 0; i < s->blocks_x; i++) {
        s->band[i] = QS_EXTENT_NONE;
    }
    return s;
}

static void notify_changed(QsScreen *screen)
{
    g_mutex_lock(&screen->cb_lock);
    for (guint i = 0; i < screen->callbacks->len; i++) {
        QsChangedCallback *cb = &g_array_index(screen->callbacks,
                                               QsChangedCallback, i);
        cb->func(screen, cb->user_data);
    }
    g_mutex_unlock(&screen->cb_lock);
}

/* Installs `s` (may be NULL) as the current surface with a new serial. */
static void replace_surface(QsScreen *screen, QsSurface *s)
{
    QsSurface *old;

    g_mutex_lock(&screen->lock);
    old = screen->surface;
    screen->surface = s;
    screen->serial++;
    screen->commits++;
    g_mutex_unlock(&screen->lock);
    qs_surface_free(old);
}

static gboolean check_size(uint32_t width, uint32_t height, GError **error)
{
    if (width == 0 || height == 0 || width > QS_SCREEN_MAX_SIDE ||
        height > QS_SCREEN_MAX_SIDE ||
        (uint64_t)width * height > QS_SCREEN_MAX_AREA) {
        g_set_error(error, QS_SCREEN_ERROR, QS_SCREEN_ERROR_INVALID,
                    "surface size %ux%u out of range", width, height);
        return FALSE;
    }
    return TRUE;
}

static gboolean check_format(uint32_t pixman_format, GError **error)
{
    if (pixman_format != QS_PIXMAN_X8R8G8B8 &&
        pixman_format != QS_PIXMAN_A8R8G8B8) {
        g_set_error(error, QS_SCREEN_ERROR, QS_SCREEN_ERROR_UNSUPPORTED,
                    "pixel format 0x%08x not supported", pixman_format);
        return FALSE;
    }
    return TRUE;
}

/* `width` x `height` pixels, rows `stride` apart, within `size` bytes. The
 * last row needs only its pixels, as qemu may not pad it. Sizes are at most
 * QS_SCREEN_MAX_SIDE, so 64-bit arithmetic cannot overflow. */
static gboolean check_buffer(const uint8_t *data, size_t size, uint32_t width,
                             uint32_t height, uint32_t stride, GError **error)
{
    uint64_t row = (uint64_t)width * 4;

    if (stride < row) {
        g_set_error(error, QS_SCREEN_ERROR, QS_SCREEN_ERROR_INVALID,
                    "stride %u too small for width %u", stride, width);
        return FALSE;
    }
    if ((uint64_t)stride * (height - 1) + row > size || !data) {
        g_set_error(error, QS_SCREEN_ERROR, QS_SCREEN_ERROR_INVALID,
                    "%zu bytes of data, %ux%u with stride %u needs more",
                    size, width, height, stride);
        return FALSE;
    }
    return TRUE;
}

/* The rectangle lies inside a surface of surf_w x surf_h. */
static gboolean check_rect(int32_t x, int32_t y, int32_t width, int32_t height,
                           uint32_t surf_w, uint32_t surf_h, GError **error)
{
    if (x < 0 || y < 0 || width <= 0 || height <= 0 ||
        (uint64_t)x + (uint64_t)width > surf_w ||
        (uint64_t)y + (uint64_t)height > surf_h) {
        g_set_error(error, QS_SCREEN_ERROR, QS_SCREEN_ERROR_INVALID,
                    "rectangle %dx%d at %d,%d not inside %ux%u",
                    width, height, x, y, surf_w, surf_h);
        return FALSE;
    }
    return TRUE;
}

static gboolean check_surface(QsScreen *screen, GError **error)
{
    if (!screen->surface) {
        g_set_error_literal(error, QS_SCREEN_ERROR, QS_SCREEN_ERROR_NO_SURFACE,
                            "update without a surface");
        return FALSE;
    }
    return TRUE;
}

gboolean qs_screen_scanout(QsScreen *screen, uint32_t width, uint32_t height,
                           uint32_t stride, uint32_t pixman_format,
                           const uint8_t *data, size_t size, int64_t now_us,
                           GError **error)
{
    g_autoptr(GMutexLocker) locker = g_mutex_locker_new(&screen->produce_lock);
    QsSurface *s = screen->surface;
    gboolean changed;

    if (!check_size(width, height, error) ||
        !check_format(pixman_format, error) ||
        !check_buffer(data, size, width, height, stride, error)) {
        return FALSE;
    }
    if (s && s->width == width && s->height == height) {
        /* qemu's full-frame flush: only what differs is news. */
        changed = qs_screen_apply(screen, 0, 0, width, height, data, stride,
                                  now_us);
    } else {
        s = surface_new(width, height, now_us, error);
        if (!s) {
            return FALSE;
        }
        qs_copy_rows(s->pixels, (size_t)width * 4, data, stride, width,
                     height);
        replace_surface(screen, s);
        changed = TRUE;
    }
    g_clear_pointer(&locker, g_mutex_locker_free);
    if (changed) {
        notify_changed(screen);
    }
    return TRUE;
}

gboolean qs_screen_update(QsScreen *screen, int32_t x, int32_t y,
                          int32_t width, int32_t height, uint32_t stride,
                          uint32_t pixman_format, const uint8_t *data,
                          size_t size, int64_t now_us, GError **error)
{
    g_autoptr(GMutexLocker) locker = g_mutex_locker_new(&screen->produce_lock);
    gboolean changed;

    if (!check_surface(screen, error) ||
        !check_rect(x, y, width, height, screen->surface->width,
                    screen->surface->height, error) ||
        !check_format(pixman_format, error) ||
        !check_buffer(data, size, width, height, stride, error)) {
        return FALSE;
    }
    changed = qs_screen_apply(screen, x, y, width, height, data, stride,
                              now_us);
    g_clear_pointer(&locker, g_mutex_locker_free);
    if (changed) {
        notify_changed(screen);
    }
    return TRUE;
}

gboolean qs_screen_update_from_map(QsScreen *screen, const uint8_t *map,
                                   size_t map_size, uint32_t map_width,
                                   uint32_t map_height, uint32_t map_stride,
                                   uint32_t pixman_format, int32_t x, int32_t y,
                                   int32_t width, int32_t height,
                                   int64_t now_us, GError **error)
{
    g_autoptr(GMutexLocker) locker = g_mutex_locker_new(&screen->produce_lock);
    QsSurface *s = screen->surface;
    gboolean changed;

    if (!check_surface(screen, error)) {
        return FALSE;
    }
    s = screen->surface;
    if (map_width != s->width || map_height != s->height) {
        /* The map is the whole surface: a new size comes as a scanout. */
        g_set_error(error, QS_SCREEN_ERROR, QS_SCREEN_ERROR_INVALID,
                    "map of %ux%u for a %ux%u surface",
                    map_width, map_height, s->width, s->height);
        return FALSE;
    }
    if (!check_rect(x, y, width, height, map_width, map_height, error) ||
        !check_format(pixman_format, error) ||
        !check_buffer(map, map_size, map_width, map_height, map_stride,
                      error)) {
        return FALSE;
    }
    changed = qs_screen_apply(screen, x, y, width, height,
                              map + (size_t)y * map_stride + (size_t)x * 4,
                              map_stride, now_us);
    g_clear_pointer(&locker, g_mutex_locker_free);
    if (changed) {
        notify_changed(screen);
    }
    return TRUE;
}

gboolean qs_screen_resize(QsScreen *screen, uint32_t width, uint32_t height,
                          int64_t now_us, GError **error)
{
    g_autoptr(GMutexLocker) locker = g_mutex_locker_new(&screen->produce_lock);
    QsSurface *s = screen->surface;

    if (!check_size(width, height, error)) {
        return FALSE;
    }
    if (s && s->width == width && s->height == height) {
        /* The property change that follows a correct scanout: keep it. */
        return TRUE;
    }
    s = surface_new(width, height, now_us, error);
    if (!s) {
        return FALSE;
    }
    replace_surface(screen, s);
    g_clear_pointer(&locker, g_mutex_locker_free);
    notify_changed(screen);
    return TRUE;
}

void qs_screen_disable(QsScreen *screen)
{
    g_autoptr(GMutexLocker) locker = g_mutex_locker_new(&screen->produce_lock);

    if (!screen->surface) {
        return;
    }
    replace_surface(screen, NULL);
    g_clear_pointer(&locker, g_mutex_locker_free);
    notify_changed(screen);
}

guint qs_screen_add_changed_func(QsScreen *screen, QsScreenChangedFunc func,
                                 gpointer user_data)
{
    QsChangedCallback cb = { 0, func, user_data };

    g_mutex_lock(&screen->cb_lock);
    cb.id = screen->next_cb_id++;
    g_array_append_val(screen->callbacks, cb);
    g_mutex_unlock(&screen->cb_lock);
    return cb.id;
}

void qs_screen_remove_changed_func(QsScreen *screen, guint id)
{
    g_mutex_lock(&screen->cb_lock);
    for (guint i = 0; i < screen->callbacks->len; i++) {
        if (g_array_index(screen->callbacks, QsChangedCallback, i).id == id) {
            g_array_remove_index(screen->callbacks, i);
            break;
        }
    }
    g_mutex_unlock(&screen->cb_lock);
}
