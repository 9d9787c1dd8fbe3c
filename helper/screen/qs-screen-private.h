/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsScreen's state, shared by the files of helper/screen and nobody else. */
#pragma once

#include "qs-screen.h"

/* Inclusive pixel bounds of a change inside one block (0..15 each);
 * x0 > x1 means none. */
typedef struct {
    uint8_t x0, y0, x1, y1;
} QsBlockExtent;

#define QS_EXTENT_NONE ((QsBlockExtent){ 0xff, 0xff, 0, 0 })

/* heat_counted of a block never counted. */
#define QS_NEVER (INT64_MIN / 2)

/* Everything that depends on a surface's size; replaced as a whole. */
typedef struct {
    uint32_t width, height;
    uint32_t blocks_x, blocks_y;
    uint32_t *pixels;           /* width * height, rows width apart */
    uint64_t *block_seq;        /* commit number of the block's last change */
    int64_t *block_time;        /* producer time of the block's last change */
    int64_t *heat_counted;      /* time of the block's last heat count */
    QsBlockExtent *extent;      /* changed pixels since the block was cold */
    uint8_t *heat_counts;       /* QS_SCREEN_HEAT_BUCKETS rows of blocks */
    uint16_t *heat_total;       /* per block: sum over the buckets */
    /* Producer-only, so it needs no lock: */
    uint32_t *scratch;          /* one band (16 rows) of the surface width */
    QsBlockExtent *band;        /* blocks_x: changes in the band being done */
} QsSurface;

typedef struct {
    guint id;
    QsScreenChangedFunc func;
    gpointer user_data;
} QsChangedCallback;

/* Lock order: produce_lock, then lock. cb_lock is taken with neither held,
 * so a callback may take lock (consumer calls). */
struct QsScreen {
    GMutex produce_lock;        /* one producer call at a time */
    GMutex lock;                /* what consumers read: everything below */
    QsSurface *surface;         /* NULL: disabled / not yet scanned out */
    uint64_t serial;
    uint64_t commits;
    int64_t heat_bucket;        /* index (time / bucket) of the newest bucket */

    GMutex cb_lock;             /* callbacks; held while they run */
    GArray *callbacks;          /* QsChangedCallback */
    guint next_cb_id;
};

static inline uint32_t qs_blocks(uint32_t pixels)
{
    return (pixels + QS_SCREEN_BLOCK - 1) / QS_SCREEN_BLOCK;
}

/* qs-screen-heat.c; all with screen->lock held and a surface. */
void qs_heat_advance(QsScreen *screen, int64_t now_us);
void qs_heat_count(QsScreen *screen, uint32_t block, int64_t now_us);

void qs_surface_free(QsSurface *s);

/* qs-screen-copy.c */
/* Copies width x height pixels, dropping the X/alpha byte. */
void qs_copy_rows(uint32_t *dst, size_t dst_stride, const uint8_t *src,
                  size_t src_stride, uint32_t width, uint32_t height);
/* Copies a checked rectangle into the current surface, recording which
 * blocks changed; called with produce_lock held. TRUE if anything changed. */
gboolean qs_screen_apply(QsScreen *screen, uint32_t x, uint32_t y,
                         uint32_t width, uint32_t height, const uint8_t *src,
                         size_t src_stride, int64_t now_us);
