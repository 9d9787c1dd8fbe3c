/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The scheduler's state, shared by its two files (flow-internal). */
#pragma once

#include "flow/qs-scheduler.h"

/*
 * qs-scheduler.c       damage in, the bulk lane's bands, feedback, stream hints
 * qs-scheduler-fast.c  the fast lane: small groups of cold dirty blocks
 */

#define BPP_ONE 256u                   /* bytes per pixel, fixed point */
#define BPP_INITIAL (2 * BPP_ONE)      /* noise-like until told otherwise */
#define BPP_MIN 4u
#define BPP_MAX (8 * BPP_ONE)
#define BLOCK_PX (QS_DAMAGE_BLOCK * QS_DAMAGE_BLOCK)

typedef struct {
    uint32_t col, row, cols, rows;
    uint32_t since_ms;
} Cand;

typedef struct {
    gboolean used;
    uint32_t id;
    QsRect rect;
} StreamHint;

struct QsScheduler {
    QsDamage *damage;
    uint64_t serial;
    uint32_t bpp[2];                  /* [cold, hot], 1/256 bytes per pixel */
    uint8_t *cost;                    /* per block: last 1/32 B/px, 0 unknown */
    uint32_t *sent_ms;                /* per block: last pick, ms | 1; 0 never */
    uint32_t cur_col[2], cur_row[2];  /* sweep cursors: [fresh, busy] */

    const QsScreenHeat *heat;         /* borrowed: qs_scheduler_set_heat() */
    uint64_t add_gen;                 /* bumped by damage additions */
    uint64_t heat_gen;                /* bumped by qs_scheduler_set_heat() */
    uint64_t fast_gen;
    uint64_t fast_heat_gen;
    gboolean fast_valid;
    GArray *fast;                     /* Cand, oldest first */
    uint32_t *label;                  /* flood-fill marks, one pass number */
    uint32_t pass;
    GArray *stack;

    StreamHint streams[QS_SCHED_MAX_STREAMS];
};

/* Hot as of the last heat the plan gave (the screen's own definition,
 * qs-screen.h); nothing is hot without one. */
static inline gboolean qs_scheduler_hot(const QsScheduler *s, uint32_t c, uint32_t r)
{
    const QsScreenHeat *h = s->heat;

    return h && c < h->blocks_x && r < h->blocks_y &&
           h->hot[(size_t)r * h->blocks_x + c];
}

/* qs-scheduler-fast.c */
/* The fast lane's candidates as of now (cached until damage or the heat
 * changes), oldest first, in s->fast. */
void qs_scheduler_find_fast(QsScheduler *s, int64_t now_us);
/* Some block of c is still dirty. */
gboolean qs_scheduler_cand_has_dirty(const QsScheduler *s, const Cand *c);
