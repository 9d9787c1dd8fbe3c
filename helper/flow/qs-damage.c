/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One client's not-yet-sent damage, in 16x16 blocks. */
#include "flow/qs-damage.h"

#include <string.h>

/*
 * Six bytes per block (1 Mi blocks, 6 MiB, at the 16384 x 16384 limit).
 * Heat is not kept here: it is the screen's (qs-screen.h), counted once for
 * every client when qemu delivers a change.
 */

struct QsDamage {
    uint32_t width, height;
    uint32_t cols, rows;
    uint8_t *dirty;
    uint8_t *excluded;
    uint32_t *since_ms;
    uint32_t *row_dirty;
    uint64_t n_dirty;
    uint64_t generation;
};

QsDamage *qs_damage_new(uint32_t width, uint32_t height)
{
    QsDamage *d;
    size_t n;

    if (width == 0 || height == 0 ||
        width > QS_DAMAGE_MAX_SIDE || height > QS_DAMAGE_MAX_SIDE) {
        return NULL;
    }
    d = g_new0(QsDamage, 1);
    d->width = width;
    d->height = height;
    d->cols = (width + QS_DAMAGE_BLOCK - 1) / QS_DAMAGE_BLOCK;
    d->rows = (height + QS_DAMAGE_BLOCK - 1) / QS_DAMAGE_BLOCK;
    n = (size_t)d->cols * d->rows;
    d->dirty = g_malloc(n);
    memset(d->dirty, 1, n);
    d->excluded = g_malloc0(n);
    d->since_ms = g_new0(uint32_t, n);
    d->row_dirty = g_new(uint32_t, d->rows);
    for (uint32_t r = 0; r < d->rows; r++) {
        d->row_dirty[r] = d->cols;
    }
    d->n_dirty = n;
    d->generation = 1;
    return d;
}

void qs_damage_free(QsDamage *d)
{
    if (!d) {
        return;
    }
    g_free(d->dirty);
    g_free(d->excluded);
    g_free(d->since_ms);
    g_free(d->row_dirty);
    g_free(d);
}

uint32_t qs_damage_cols(const QsDamage *d) { return d->cols; }
uint32_t qs_damage_rows(const QsDamage *d) { return d->rows; }
uint32_t qs_damage_width(const QsDamage *d) { return d->width; }
uint32_t qs_damage_height(const QsDamage *d) { return d->height; }
uint64_t qs_damage_dirty_count(const QsDamage *d) { return d->n_dirty; }
uint64_t qs_damage_generation(const QsDamage *d) { return d->generation; }

uint32_t qs_damage_row_dirty(const QsDamage *d, uint32_t row)
{
    return row < d->rows ? d->row_dirty[row] : 0;
}

static inline size_t idx(const QsDamage *d, uint32_t col, uint32_t row)
{
    return (size_t)row * d->cols + col;
}

static void set_dirty(QsDamage *d, size_t i, uint32_t row, int64_t now_us)
{
    if (!d->dirty[i]) {
        d->dirty[i] = 1;
        d->since_ms[i] = (uint32_t)(now_us / 1000);
        d->row_dirty[row]++;
        d->n_dirty++;
        d->generation++;
    }
}

static void clear_dirty(QsDamage *d, size_t i, uint32_t row)
{
    if (d->dirty[i]) {
        d->dirty[i] = 0;
        d->row_dirty[row]--;
        d->n_dirty--;
        d->generation++;
    }
}

void qs_damage_add_block(QsDamage *d, uint32_t col, uint32_t row,
                         int64_t now_us)
{
    size_t i;

    if (col >= d->cols || row >= d->rows) {
        return;
    }
    i = idx(d, col, row);
    if (!d->excluded[i]) {
        set_dirty(d, i, row, now_us);
    }
}

void qs_damage_add_rect(QsDamage *d, const QsRect *r, int64_t now_us)
{
    int64_t x0 = MAX(r->x, 0), y0 = MAX(r->y, 0);
    int64_t x1 = MIN((int64_t)r->x + r->width, (int64_t)d->width);
    int64_t y1 = MIN((int64_t)r->y + r->height, (int64_t)d->height);

    if (r->width <= 0 || r->height <= 0 || x0 >= x1 || y0 >= y1) {
        return;
    }
    for (int64_t row = y0 / QS_DAMAGE_BLOCK;
         row <= (y1 - 1) / QS_DAMAGE_BLOCK; row++) {
        for (int64_t col = x0 / QS_DAMAGE_BLOCK;
             col <= (x1 - 1) / QS_DAMAGE_BLOCK; col++) {
            qs_damage_add_block(d, (uint32_t)col, (uint32_t)row, now_us);
        }
    }
}

gboolean qs_damage_is_dirty(const QsDamage *d, uint32_t col, uint32_t row)
{
    return col < d->cols && row < d->rows && d->dirty[idx(d, col, row)];
}

uint32_t qs_damage_since_ms(const QsDamage *d, uint32_t col, uint32_t row)
{
    return col < d->cols && row < d->rows ? d->since_ms[idx(d, col, row)] : 0;
}

void qs_damage_clear_blocks(QsDamage *d, uint32_t col, uint32_t row,
                            uint32_t cols, uint32_t rows)
{
    uint32_t c1 = MIN((uint64_t)col + cols, d->cols);
    uint32_t r1 = MIN((uint64_t)row + rows, d->rows);

    for (uint32_t r = row; r < r1; r++) {
        if (d->row_dirty[r] == 0) {
            continue;
        }
        for (uint32_t c = col; c < c1; c++) {
            clear_dirty(d, idx(d, c, r), r);
        }
    }
}

void qs_damage_mark_blocks(QsDamage *d, uint32_t col, uint32_t row,
                           uint32_t cols, uint32_t rows, int64_t now_us)
{
    uint32_t c1 = MIN((uint64_t)col + cols, d->cols);
    uint32_t r1 = MIN((uint64_t)row + rows, d->rows);

    for (uint32_t r = row; r < r1; r++) {
        for (uint32_t c = col; c < c1; c++) {
            size_t i = idx(d, c, r);

            if (!d->excluded[i]) {
                set_dirty(d, i, r, now_us);
            }
        }
    }
}

QsRect qs_damage_block_rect(const QsDamage *d, uint32_t col, uint32_t row,
                            uint32_t cols, uint32_t rows)
{
    uint64_t x0 = MIN((uint64_t)col * QS_DAMAGE_BLOCK, d->width);
    uint64_t y0 = MIN((uint64_t)row * QS_DAMAGE_BLOCK, d->height);
    uint64_t x1 = MIN(((uint64_t)col + cols) * QS_DAMAGE_BLOCK, d->width);
    uint64_t y1 = MIN(((uint64_t)row + rows) * QS_DAMAGE_BLOCK, d->height);

    return (QsRect){ (int32_t)x0, (int32_t)y0, (int32_t)(x1 - x0),
                     (int32_t)(y1 - y0) };
}

void qs_damage_set_excluded(QsDamage *d, uint32_t col, uint32_t row,
                            gboolean excluded, int64_t now_us)
{
    size_t i;

    if (col >= d->cols || row >= d->rows) {
        return;
    }
    i = idx(d, col, row);
    if (excluded && !d->excluded[i]) {
        d->excluded[i] = 1;
        clear_dirty(d, i, row);
        d->generation++;
    } else if (!excluded && d->excluded[i]) {
        d->excluded[i] = 0;
        set_dirty(d, i, row, now_us);
    }
}

gboolean qs_damage_is_excluded(const QsDamage *d, uint32_t col, uint32_t row)
{
    return col < d->cols && row < d->rows && d->excluded[idx(d, col, row)];
}
