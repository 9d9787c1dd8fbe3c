/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Picks what one client should be sent next from its pending damage. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "flow/qs-damage.h"
#include "flow/qs-pacer.h"
#include "screen/qs-screen.h"

/*
 * The scheduler holds regions, never pixels: an item names a rectangle whose
 * pixels the encoder reads when it encodes it, so a region damaged ten times
 * before it is picked is sent once, with its newest content.
 * Design note and thresholds: qs-scheduler.c.
 */

#define QS_SCHED_FAST_MAX_BLOCKS 64   /* 16384 px: a 96x96 key box, a text line */
#define QS_SCHED_BAND_MAX_ROWS 4      /* 64 pixel rows */
#define QS_SCHED_MAX_STREAMS 16
#define QS_SCHED_ITEM_OVERHEAD 256    /* bytes a message + image header cost */
#define QS_SCHED_RESEND_MS 100        /* re-damaged sooner: behind older work */

typedef enum {
    QS_LANE_FAST,   /* small, cold: goes before any bulk work */
    QS_LANE_BULK,   /* a band of a large or animated region */
} QsLane;

typedef struct {
    QsRect rect;          /* pixels, inside the surface, 16-aligned except at edges */
    QsLane lane;
    gboolean hot;         /* the region is animating (an encoder may go lossy) */
    uint32_t est_bytes;   /* the scheduler's guess of the encoded size */
    uint64_t surface_serial;  /* as given to qs_scheduler_reset */
} QsFlowItem;

typedef enum {
    QS_PICK_ITEM,      /* *item is filled; encode it and write it */
    QS_PICK_IDLE,      /* nothing pending: tell the estimator (app-limited) */
    QS_PICK_BLOCKED,   /* work pending, no room: retry at budget->wake_us */
} QsPick;

typedef struct QsScheduler QsScheduler;

QsScheduler *qs_scheduler_new(void);
void qs_scheduler_free(QsScheduler *sched);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsScheduler, qs_scheduler_free)

/* A new surface (QsScreenDamage.new_surface): everything is dirty, streams
 * are forgotten. `serial` is the screen's surface serial; items carry it so
 * the encoder reads the right surface (qs_screen_read). FALSE for a zero
 * size or a side over QS_DAMAGE_MAX_SIDE. */
gboolean qs_scheduler_reset(QsScheduler *sched, uint64_t serial,
                            uint32_t width, uint32_t height, int64_t now_us);
uint64_t qs_scheduler_surface_serial(const QsScheduler *sched);

/* Damage as pixel rectangles (clipped) or as the screen's block map
 * (QsScreenDamage.damaged: one byte per 16x16 block, non-zero = changed,
 * `cols` x `rows` with `stride` bytes per row); FALSE if the map does not
 * match the surface. */
void qs_scheduler_add_rect(QsScheduler *sched, const QsRect *rect,
                           int64_t now_us);
gboolean qs_scheduler_add_blocks(QsScheduler *sched, const uint8_t *map,
                                 uint32_t cols, uint32_t rows, size_t stride,
                                 int64_t now_us);

/* The screen's heat (qs_screen_heat_snapshot), which says which blocks are
 * hot: a hot block is never fast lane and is swept as busy. Borrowed until
 * the next call or reset; NULL, or a heat of another block grid, makes
 * nothing hot. */
void qs_scheduler_set_heat(QsScheduler *sched, const QsScreenHeat *heat);

/* The next item that fits `budget` (see QsPick). Picking clears the item's
 * blocks: damage arriving later marks them again. */
QsPick qs_scheduler_next(QsScheduler *sched, int64_t now_us,
                         const QsPacerBudget *budget, QsFlowItem *item);

/* The encoded size of an item picked from the current surface: tunes the
 * bytes-per-pixel guesses that size bands. Items of an older surface are
 * ignored. */
void qs_scheduler_feedback(QsScheduler *sched, const QsFlowItem *item,
                           uint32_t encoded_bytes);

/* A picked item could not be sent (encoder failure, dropped): its blocks are
 * marked dirty again. */
void qs_scheduler_requeue(QsScheduler *sched, const QsFlowItem *item,
                          int64_t now_us);

/* Stream hints: blocks entirely inside a streamed rectangle get no image
 * work; when the hint is cleared they are sent once as images. `id` is the
 * caller's; FALSE when QS_SCHED_MAX_STREAMS are already set. */
gboolean qs_scheduler_stream_set(QsScheduler *sched, uint32_t id,
                                 const QsRect *rect, int64_t now_us);
void qs_scheduler_stream_clear(QsScheduler *sched, uint32_t id, int64_t now_us);

/* Read-only view (tests, stream detection by heat). */
const QsDamage *qs_scheduler_damage(const QsScheduler *sched);
