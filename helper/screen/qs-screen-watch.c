/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The screen's consumer side: surface info, pixel reads and per-consumer
 * damage, accumulated without a queue of frames. */

#include "qs-screen-private.h"

#include <string.h>

/*
 * A watch remembers the surface serial and the commit number of its last
 * take; every block stores the commit number of its last change. So the
 * producer's cost does not depend on the number of consumers, damage since
 * any take is "blocks newer than my commit", and a take costs one pass over
 * the blocks (5000 at 1280x800) under the lock.
 */
struct QsScreenWatch {
    QsScreen *screen;
    uint64_t serial;    /* 0 before the first take: a serial is never 0 */
    uint64_t commit;
};

void qs_screen_get_info(QsScreen *screen, QsScreenInfo *info)
{
    memset(info, 0, sizeof(*info));
    g_mutex_lock(&screen->lock);
    info->serial = screen->serial;
    info->commits = screen->commits;
    if (screen->surface) {
        info->enabled = TRUE;
        info->width = screen->surface->width;
        info->height = screen->surface->height;
    }
    g_mutex_unlock(&screen->lock);
}

static gboolean read_locked(QsScreen *screen, uint64_t serial,
                            const QsRect *rect, uint8_t *dst,
                            size_t dst_stride, GError **error)
{
    QsSurface *s = screen->surface;

    if (!s || serial != screen->serial) {
        g_set_error(error, QS_SCREEN_ERROR, QS_SCREEN_ERROR_STALE,
                    "surface %" G_GUINT64_FORMAT " is gone", serial);
        return FALSE;
    }
    if (rect->x < 0 || rect->y < 0 || rect->width <= 0 || rect->height <= 0 ||
        (uint64_t)rect->x + (uint64_t)rect->width > s->width ||
        (uint64_t)rect->y + (uint64_t)rect->height > s->height ||
        dst_stride < (size_t)rect->width * 4) {
        g_set_error(error, QS_SCREEN_ERROR, QS_SCREEN_ERROR_INVALID,
                    "read of %dx%d at %d,%d (stride %zu) from %ux%u",
                    rect->width, rect->height, rect->x, rect->y, dst_stride,
                    s->width, s->height);
        return FALSE;
    }
    for (int32_t r = 0; r < rect->height; r++) {
        memcpy(dst + (size_t)r * dst_stride,
               s->pixels + (size_t)(rect->y + r) * s->width + rect->x,
               (size_t)rect->width * 4);
    }
    return TRUE;
}

gboolean qs_screen_read(QsScreen *screen, uint64_t serial,
                        const QsRect *rect, uint8_t *dst,
                        size_t dst_stride, GError **error)
{
    gboolean ok;

    g_mutex_lock(&screen->lock);
    ok = read_locked(screen, serial, rect, dst, dst_stride, error);
    g_mutex_unlock(&screen->lock);
    return ok;
}

QsScreenWatch *qs_screen_watch_new(QsScreen *screen)
{
    QsScreenWatch *watch = g_new0(QsScreenWatch, 1);

    watch->screen = screen;
    return watch;
}

void qs_screen_watch_free(QsScreenWatch *watch)
{
    g_free(watch);
}

static QsScreenDamage *take_locked(QsScreenWatch *watch)
{
    QsScreen *screen = watch->screen;
    QsSurface *s = screen->surface;
    QsScreenDamage *damage;
    size_t nblocks;

    if (watch->serial == screen->serial && watch->commit == screen->commits) {
        return NULL;
    }
    damage = g_new0(QsScreenDamage, 1);
    damage->serial = screen->serial;
    damage->new_surface = watch->serial != screen->serial;
    damage->enabled = s != NULL;
    if (s) {
        damage->width = s->width;
        damage->height = s->height;
        damage->blocks_x = s->blocks_x;
        damage->blocks_y = s->blocks_y;
        nblocks = (size_t)s->blocks_x * s->blocks_y;
        damage->damaged = g_malloc0(nblocks);
        for (size_t b = 0; b < nblocks; b++) {
            if (damage->new_surface || s->block_seq[b] > watch->commit) {
                damage->damaged[b] = 1;
                damage->n_damaged++;
                damage->newest_us = MAX(damage->newest_us, s->block_time[b]);
            }
        }
    }
    watch->serial = screen->serial;
    watch->commit = screen->commits;
    if (!damage->new_surface && damage->n_damaged == 0) {
        qs_screen_damage_free(damage);
        return NULL;
    }
    return damage;
}

QsScreenDamage *qs_screen_watch_take(QsScreenWatch *watch)
{
    QsScreenDamage *damage;

    g_mutex_lock(&watch->screen->lock);
    damage = take_locked(watch);
    g_mutex_unlock(&watch->screen->lock);
    return damage;
}

void qs_screen_damage_free(QsScreenDamage *damage)
{
    if (!damage) {
        return;
    }
    g_free(damage->damaged);
    g_free(damage);
}

GArray *qs_screen_damage_rects(const QsScreenDamage *damage)
{
    GArray *rects = g_array_new(FALSE, FALSE, sizeof(QsRect));
    /* Rectangles still open at the previous block row, by first column. */
    g_autofree int32_t *open = NULL;
    uint32_t bw = damage->blocks_x;

    if (!damage->damaged || !bw) {
        return rects;
    }
    open = g_new(int32_t, bw);
    for (uint32_t i = 0; i < bw; i++) {
        open[i] = -1;
    }
    for (uint32_t by = 0; by < damage->blocks_y; by++) {
        const uint8_t *row = damage->damaged + (size_t)by * bw;
        int32_t y = by * QS_SCREEN_BLOCK;
        int32_t h = MIN(QS_SCREEN_BLOCK, (int32_t)damage->height - y);
        uint32_t bx = 0;

        while (bx < bw) {
            uint32_t end = bx;
            int32_t x, w;

            if (!row[bx]) {
                open[bx++] = -1;
                continue;
            }
            while (end < bw && row[end]) {
                end++;
            }
            x = bx * QS_SCREEN_BLOCK;
            w = MIN((int32_t)(end * QS_SCREEN_BLOCK),
                    (int32_t)damage->width) - x;
            if (open[bx] >= 0) {
                QsRect *r = &g_array_index(rects, QsRect, open[bx]);

                if (r->x == x && r->width == w &&
                    r->y + r->height == y) {
                    r->height += h;
                    for (uint32_t i = bx + 1; i < end; i++) {
                        open[i] = -1;
                    }
                    bx = end;
                    continue;
                }
            }
            g_array_append_val(rects, ((QsRect){ x, y, w, h }));
            open[bx] = rects->len - 1;
            for (uint32_t i = bx + 1; i < end; i++) {
                open[i] = -1;
            }
            bx = end;
        }
    }
    return rects;
}
