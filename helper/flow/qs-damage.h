/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One client's not-yet-sent damage, in 16x16 blocks. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "util/qs-rect.h"

/*
 * A set of blocks, not a list of updates: damaging a block twice before it is
 * sent leaves one dirty bit, so there is no queue of stale frames to drain.
 * How often a block changes (heat) is the screen's, not this map's.
 */

#define QS_DAMAGE_BLOCK 16
#define QS_DAMAGE_MAX_SIDE 16384

typedef struct QsDamage QsDamage;

/* NULL for a zero size or a side over QS_DAMAGE_MAX_SIDE. Starts all dirty. */
QsDamage *qs_damage_new(uint32_t width, uint32_t height);
void qs_damage_free(QsDamage *damage);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsDamage, qs_damage_free)

uint32_t qs_damage_cols(const QsDamage *damage);
uint32_t qs_damage_rows(const QsDamage *damage);
uint32_t qs_damage_width(const QsDamage *damage);
uint32_t qs_damage_height(const QsDamage *damage);

/* Marks the blocks a pixel rectangle touches; clipped to the surface. */
void qs_damage_add_rect(QsDamage *damage, const QsRect *rect, int64_t now_us);
/* One block: marks it dirty (unless excluded). */
void qs_damage_add_block(QsDamage *damage, uint32_t col, uint32_t row,
                         int64_t now_us);

gboolean qs_damage_is_dirty(const QsDamage *damage, uint32_t col, uint32_t row);
/* ms clock (wrapping) of the oldest damage still pending in the block. */
uint32_t qs_damage_since_ms(const QsDamage *damage, uint32_t col, uint32_t row);
uint64_t qs_damage_dirty_count(const QsDamage *damage);
uint32_t qs_damage_row_dirty(const QsDamage *damage, uint32_t row);
/* Bumped by every change to the dirty set or the exclusion mask. */
uint64_t qs_damage_generation(const QsDamage *damage);

/* Marks a block rectangle dirty again (a picked item that was not sent). */
void qs_damage_mark_blocks(QsDamage *damage, uint32_t col, uint32_t row,
                           uint32_t cols, uint32_t rows, int64_t now_us);
/* Block rectangle [col, col+cols) x [row, row+rows): clear dirty bits. */
void qs_damage_clear_blocks(QsDamage *damage, uint32_t col, uint32_t row,
                            uint32_t cols, uint32_t rows);
/* Pixel rectangle of a block rectangle, clipped to the surface. */
QsRect qs_damage_block_rect(const QsDamage *damage, uint32_t col, uint32_t row,
                            uint32_t cols, uint32_t rows);

/* Exclusion (a stream covers it): new damage there is dropped and pending
 * damage cleared; un-excluding marks the blocks dirty so their final state
 * goes out as images. */
void qs_damage_set_excluded(QsDamage *damage, uint32_t col, uint32_t row,
                            gboolean excluded, int64_t now_us);
gboolean qs_damage_is_excluded(const QsDamage *damage, uint32_t col,
                               uint32_t row);
