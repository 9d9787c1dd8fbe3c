/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Picks what one client should be sent next from its pending damage. */
#include "flow/qs-scheduler-private.h"

#include <string.h>

/*
 * DESIGN NOTE: what to send, in which order, how much.
 *
 * What was measured before. On a slow link spice-server and the andris
 * prototype drew a key press seconds late: 2039 ms (spice-server, streaming
 * off) and 3492 ms (andris) p50 at 80 ms / 10 Mbit with a busy 640x480 noise
 * area; 6931 ms at 80 ms / 5 Mbit; over 15 s at 150 ms / 2 Mbit. Both paced on
 * an ACK window counted in messages (20, blocking at 40), so 2-2.5 MiB of
 * already-decided images sat between the key box and the client (andris's
 * mean ACK lag: 3.5 s, 6.6 s, 11 s). andris also counted heat from what it
 * had sent, so the same throttle kept it from ever starting a stream.
 *
 * Policy.
 * 1. Newest state wins. Damage is a set of 16x16 blocks (qs-damage), not a
 *    queue: an item names a rectangle, and its pixels are read when it is
 *    encoded. Nothing is decided before the link can take it, so the only
 *    stale bytes are those in the socket, which qs-pacer holds near one BDP
 *    (qs-pacer.c: gain x BDP, bands of BDP/4).
 * 2. Two lanes. A connected group of dirty *cold* blocks whose bounding box
 *    is at most QS_SCHED_FAST_MAX_BLOCKS (64 blocks = 16384 px: a 96x96 key
 *    box even unaligned, 112x112 = 49 blocks; a cursor; a 1000x16 text line)
 *    is fast lane: it goes before any bulk item, oldest first, and is never
 *    split. Everything else is bulk. Hot is the screen's heat
 *    (qs-screen.h; counted when qemu delivers a change, never when we send):
 *    8 changes within a second and one in the last 200 ms. Typing and
 *    clicks stay cold, a 30 fps animation is hot from its 8th frame. A small
 *    *hot* region (a spinner) is bulk: sending it first at 30 Hz could
 *    starve everything else.
 * 3. Bands. Bulk goes in rectangles of whole blocks, up to 4 block rows
 *    (64 px) high, sized to the pacer's band (BDP/4 within 4-64 KiB: 9.7 KiB
 *    at 2 Mbit/150 ms, 25 KiB at 10 Mbit/80 ms, 4 KiB on a LAN). Short bands
 *    let fast items slip in: a key box waits at most for the standing queue
 *    (0.25 BDP in the probe phase) plus half a band, about RTT/4 + RTT/8.
 *    A band is sized by per-block costs: what the last item over the block
 *    cost per pixel, at least the running high-water mark for hot blocks
 *    (their content changes between sends), 2 B/px for never-sent blocks;
 *    estimates rise at once and fall slowly, since an underestimate
 *    overfills the socket and an overestimate only shortens a band.
 * 4. Order within bulk: "fresh" before "busy". Busy is hot, or damaged
 *    again within QS_SCHED_RESEND_MS (100 ms) of being sent: a region
 *    redrawn in a burst waits behind older work instead of going out once
 *    per redraw, new content (a window opened) goes ahead of an animation
 *    that will change again anyway. Each class is swept by a cursor, left to
 *    right, top to bottom, resuming after the previous band (on its last
 *    row), so an area that keeps changing cannot starve its lower part (a
 *    "top band first" rule would resend the top forever).
 * 5. Merging. Runs of dirty blocks of one class in a row are joined across
 *    a one-block gap (a clean 16x16 block costs ~256-768 encoded bytes at
 *    1-3 bytes per pixel, about one message + image header,
 *    QS_SCHED_ITEM_OVERHEAD), and a band grows downwards while the next row
 *    is at least half dirty in its columns. Fast items are bounding boxes
 *    (at most 64 blocks, so at most a few KiB of clean pixels).
 * 6. Streams. A rectangle the stream logic streams is excluded block by
 *    block (blocks entirely inside it); when the hint is cleared those blocks
 *    are sent once as images (the lossless state).
 *
 * Checked on tests/unit/flow/test-flow-link.c's simulated links with the
 * same activity (640x480 noise at 30 Hz, 1-3 B/px; 96x96 key box),
 * 24 key presses per link and 3 seeds, first byte of the key box onto the
 * wire: 2 Mbit/150 ms p50 22 ms, max 72 ms (bound RTT/2 + its own
 * serialisation + 5 ms = 121 ms); 10 Mbit/80 ms p50 6 ms, max 38 ms (bound
 * 53 ms);
 * 1 Gbit/0.2 ms max 0.2 ms; socket at most 1.70 BDP including the band that
 * overshoots (bound 1.5 BDP + one band); 95-96 % link use after startup.
 */


QsScheduler *qs_scheduler_new(void)
{
    QsScheduler *s = g_new0(QsScheduler, 1);

    s->bpp[0] = s->bpp[1] = BPP_INITIAL;
    s->fast = g_array_new(FALSE, FALSE, sizeof(Cand));
    s->stack = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    return s;
}

void qs_scheduler_free(QsScheduler *s)
{
    if (!s) {
        return;
    }
    qs_damage_free(s->damage);
    g_array_unref(s->fast);
    g_array_unref(s->stack);
    g_free(s->label);
    g_free(s->cost);
    g_free(s->sent_ms);
    g_free(s);
}

gboolean qs_scheduler_reset(QsScheduler *s, uint64_t serial, uint32_t width,
                            uint32_t height, int64_t now_us)
{
    QsDamage *d = qs_damage_new(width, height);

    (void)now_us;
    if (!d) {
        return FALSE;
    }
    qs_damage_free(s->damage);
    s->damage = d;
    s->serial = serial;
    g_free(s->label);
    s->label = g_new0(uint32_t, (size_t)qs_damage_cols(d) * qs_damage_rows(d));
    s->pass = 0;
    g_free(s->cost);
    s->cost = g_malloc0((size_t)qs_damage_cols(d) * qs_damage_rows(d));
    g_free(s->sent_ms);
    s->sent_ms = g_new0(uint32_t, (size_t)qs_damage_cols(d) * qs_damage_rows(d));
    memset(s->streams, 0, sizeof(s->streams));
    memset(s->cur_col, 0, sizeof(s->cur_col));
    memset(s->cur_row, 0, sizeof(s->cur_row));
    s->fast_valid = FALSE;
    s->heat = NULL;
    s->add_gen++;
    return TRUE;
}

void qs_scheduler_set_heat(QsScheduler *s, const QsScreenHeat *heat)
{
    /* A heat of another grid is another surface's: nothing is hot then. */
    if (heat && (!s->damage || !heat->hot || heat->blocks_x != qs_damage_cols(s->damage) ||
                 heat->blocks_y != qs_damage_rows(s->damage))) {
        heat = NULL;
    }
    s->heat = heat;
    s->heat_gen++;
}

uint64_t qs_scheduler_surface_serial(const QsScheduler *s)
{
    return s->serial;
}

const QsDamage *qs_scheduler_damage(const QsScheduler *s)
{
    return s->damage;
}

void qs_scheduler_add_rect(QsScheduler *s, const QsRect *rect, int64_t now_us)
{
    if (!s->damage) {
        return;
    }
    qs_damage_add_rect(s->damage, rect, now_us);
    s->add_gen++;
}

gboolean qs_scheduler_add_blocks(QsScheduler *s, const uint8_t *map,
                                 uint32_t cols, uint32_t rows, size_t stride,
                                 int64_t now_us)
{
    if (!s->damage || cols != qs_damage_cols(s->damage) ||
        rows != qs_damage_rows(s->damage) || stride < cols) {
        return FALSE;
    }
    for (uint32_t r = 0; r < rows; r++) {
        const uint8_t *line = map + (size_t)r * stride;

        for (uint32_t c = 0; c < cols; c++) {
            if (line[c]) {
                qs_damage_add_block(s->damage, c, r, now_us);
            }
        }
    }
    s->add_gen++;
    return TRUE;
}

/* ---- bulk lane: bands swept by a cursor ---- */

/* Encoded bytes a block is expected to cost: what the last item covering it
 * cost per pixel (content tends to stay put), else a guess. Hot
 * content changes between two sends of a block, so for it the class's
 * high-water guess is a floor. */
static uint32_t block_cost(const QsScheduler *s, uint32_t c, uint32_t r)
{
    uint8_t m = s->cost[(size_t)r * qs_damage_cols(s->damage) + c];
    gboolean hot = qs_scheduler_hot(s, c, r);
    /* Never-sent blocks are assumed noisy: what the rest of the screen
     * cost says nothing about them, and an underestimate overfills. */
    uint32_t bpp = m ? m * (BPP_ONE / 32) : MAX(s->bpp[hot], BPP_INITIAL);

    if (hot) {
        bpp = MAX(bpp, s->bpp[1]);
    }

    return BLOCK_PX * bpp / BPP_ONE;
}

static uint64_t rect_cost(const QsScheduler *s, const Cand *c)
{
    uint64_t sum = QS_SCHED_ITEM_OVERHEAD;

    for (uint32_t r = c->row; r < c->row + c->rows; r++) {
        for (uint32_t k = c->col; k < c->col + c->cols; k++) {
            sum += block_cost(s, k, r);
        }
    }
    return sum;
}

/* Bulk class: 1 ("busy") for hot blocks and for blocks damaged again
 * within QS_SCHED_RESEND_MS of being picked, so a region redrawn in a burst
 * waits its turn behind older work instead of going out once per redraw. */
static gboolean busy_block(const QsScheduler *s, uint32_t c, uint32_t r,
                           int64_t now_us)
{
    uint32_t sent = s->sent_ms[(size_t)r * qs_damage_cols(s->damage) + c];

    return qs_scheduler_hot(s, c, r) ||
           (sent && (uint32_t)(now_us / 1000) - sent < QS_SCHED_RESEND_MS);
}

static gboolean dirty_of(const QsScheduler *s, uint32_t c, uint32_t r,
                         gboolean busy, int64_t now_us)
{
    return qs_damage_is_dirty(s->damage, c, r) &&
           busy_block(s, c, r, now_us) == busy;
}

/* The band starting at the first block of class `busy` at or after the
 * class's cursor, at most `room` estimated bytes (at least one block);
 * FALSE if the class has no dirty block. */
static gboolean find_band(QsScheduler *s, gboolean busy, uint64_t room,
                          int64_t now_us, Cand *out)
{
    const QsDamage *d = s->damage;
    uint32_t cols = qs_damage_cols(d), rows = qs_damage_rows(d);
    uint32_t r0 = MIN(s->cur_row[busy], rows - 1);
    uint32_t c0 = MIN(s->cur_col[busy], cols);

    for (uint32_t k = 0; k <= rows; k++) {
        uint32_t r = (r0 + k) % rows;
        uint32_t cs = k == 0 ? c0 : 0;
        uint32_t ce = k == rows ? c0 : cols;

        if (qs_damage_row_dirty(d, r) == 0) {
            continue;
        }
        for (uint32_t c = cs; c < ce; c++) {
            uint64_t sum;
            uint32_t end, kr;

            if (!dirty_of(s, c, r, busy, now_us)) {
                continue;
            }
            /* Run right over the class, bridging single other blocks. */
            sum = block_cost(s, c, r);
            end = c + 1;
            while (end < cols) {
                uint32_t step = 0;
                uint64_t add = 0;

                if (dirty_of(s, end, r, busy, now_us)) {
                    step = 1;
                } else if (end + 1 < cols &&
                           dirty_of(s, end + 1, r, busy, now_us)) {
                    step = 2;
                }
                for (uint32_t x = end; x < end + step; x++) {
                    add += block_cost(s, x, r);
                }
                if (step == 0 || sum + add > room) {
                    break;
                }
                sum += add;
                end += step;
            }
            /* Grow down while the next row is mostly dirty there. */
            for (kr = 1; kr < QS_SCHED_BAND_MAX_ROWS && r + kr < rows; kr++) {
                uint64_t add = 0;
                uint32_t n = 0;

                for (uint32_t x = c; x < end; x++) {
                    n += dirty_of(s, x, r + kr, busy, now_us);
                    add += block_cost(s, x, r + kr);
                }
                if (n * 2 < end - c || sum + add > room) {
                    break;
                }
                sum += add;
            }
            *out = (Cand){ c, r, end - c, kr, 0 };
            return TRUE;
        }
    }
    return FALSE;
}

static void fill_item(QsScheduler *s, const Cand *c, QsLane lane,
                      gboolean hot, int64_t now_us, QsFlowItem *item)
{
    item->rect = qs_damage_block_rect(s->damage, c->col, c->row, c->cols,
                                      c->rows);
    item->lane = lane;
    item->hot = hot;
    item->est_bytes = (uint32_t)MIN(rect_cost(s, c), UINT32_MAX);
    item->surface_serial = s->serial;
    qs_damage_clear_blocks(s->damage, c->col, c->row, c->cols, c->rows);
    for (uint32_t r = c->row; r < c->row + c->rows; r++) {
        for (uint32_t k = c->col; k < c->col + c->cols; k++) {
            s->sent_ms[(size_t)r * qs_damage_cols(s->damage) + k] =
                (uint32_t)(now_us / 1000) | 1;
        }
    }
}

QsPick qs_scheduler_next(QsScheduler *s, int64_t now_us,
                         const QsPacerBudget *budget, QsFlowItem *item)
{
    if (!s->damage || qs_damage_dirty_count(s->damage) == 0) {
        return QS_PICK_IDLE;
    }

    qs_scheduler_find_fast(s, now_us);
    while (s->fast->len && budget->fast_bytes > 0) {
        Cand c = g_array_index(s->fast, Cand, 0);

        g_array_remove_index(s->fast, 0);
        if (qs_scheduler_cand_has_dirty(s, &c)) {
            fill_item(s, &c, QS_LANE_FAST, FALSE, now_us, item);
            return QS_PICK_ITEM;
        }
    }

    if (qs_pacer_bulk_open(budget)) {
        uint64_t room = budget->band_bytes > QS_SCHED_ITEM_OVERHEAD ?
                        budget->band_bytes - QS_SCHED_ITEM_OVERHEAD : 0;

        for (int busy = 0; busy <= 1; busy++) {
            Cand c;

            if (find_band(s, busy, room, now_us, &c)) {
                fill_item(s, &c, QS_LANE_BULK,
                          qs_scheduler_hot(s, c.col, c.row),
                          now_us, item);
                /* Resume on the band's last row, right of it: resuming on
                 * its first row would resend the rows below it whenever
                 * they are redrawn in between (3x for a 3-row band). */
                s->cur_row[busy] = c.row + c.rows - 1;
                s->cur_col[busy] = c.col + c.cols;
                if (s->cur_col[busy] >= qs_damage_cols(s->damage)) {
                    s->cur_col[busy] = 0;
                    s->cur_row[busy] = (c.row + c.rows) % qs_damage_rows(s->damage);
                }
                return QS_PICK_ITEM;
            }
        }
    }
    return QS_PICK_BLOCKED;
}

/* An item's rectangle as we made it: inside the surface, not empty. */
static gboolean rect_ok(const QsScheduler *s, const QsRect *r)
{
    return r->x >= 0 && r->y >= 0 && r->width > 0 && r->height > 0 &&
           (int64_t)r->x + r->width <= qs_damage_width(s->damage) &&
           (int64_t)r->y + r->height <= qs_damage_height(s->damage);
}

void qs_scheduler_feedback(QsScheduler *s, const QsFlowItem *item,
                           uint32_t encoded_bytes)
{
    uint64_t px = (uint64_t)item->rect.width * item->rect.height;
    uint64_t payload, sample;
    uint32_t *bpp, c0, r0, c1, r1, cols;
    uint8_t m;

    if (!s->damage || item->surface_serial != s->serial || !rect_ok(s, &item->rect)) {
        return;
    }
    payload = encoded_bytes > QS_SCHED_ITEM_OVERHEAD ?
              encoded_bytes - QS_SCHED_ITEM_OVERHEAD : 0;
    sample = CLAMP(payload * BPP_ONE / px, BPP_MIN, BPP_MAX);
    /* Fast items are mostly cold content: they teach the cold guess. */
    /* Up at once, down slowly: an underestimate overfills the socket (and
     * delays a key box), an overestimate only makes a band smaller. */
    bpp = &s->bpp[item->hot ? 1 : 0];
    *bpp = (uint32_t)MAX(sample, (*bpp * 3 + sample) / 4);

    /* Remember where it was spent, for the next band over these blocks. */
    m = (uint8_t)CLAMP(sample * 32 / BPP_ONE, 1, UINT8_MAX);
    cols = qs_damage_cols(s->damage);
    c0 = (uint32_t)item->rect.x / QS_DAMAGE_BLOCK;
    r0 = (uint32_t)item->rect.y / QS_DAMAGE_BLOCK;
    c1 = MIN(((uint32_t)item->rect.x + item->rect.width + QS_DAMAGE_BLOCK - 1) /
             QS_DAMAGE_BLOCK, cols);
    r1 = MIN(((uint32_t)item->rect.y + item->rect.height + QS_DAMAGE_BLOCK - 1) /
             QS_DAMAGE_BLOCK, qs_damage_rows(s->damage));
    for (uint32_t r = r0; r < r1; r++) {
        uint8_t *line = s->cost + (size_t)r * cols;

        for (uint32_t c = c0; c < c1; c++) {
            line[c] = line[c] ? (uint8_t)MAX(m, (line[c] * 3u + m) / 4) : m;
        }
    }
}

void qs_scheduler_requeue(QsScheduler *s, const QsFlowItem *item,
                          int64_t now_us)
{
    const QsRect *r = &item->rect;

    if (!s->damage || item->surface_serial != s->serial || !rect_ok(s, r)) {
        return;
    }
    qs_damage_mark_blocks(s->damage, (uint32_t)r->x / QS_DAMAGE_BLOCK,
                          (uint32_t)r->y / QS_DAMAGE_BLOCK,
                          ((uint32_t)r->width + QS_DAMAGE_BLOCK - 1) /
                              QS_DAMAGE_BLOCK,
                          ((uint32_t)r->height + QS_DAMAGE_BLOCK - 1) /
                              QS_DAMAGE_BLOCK, now_us);
    s->add_gen++;
}

/* ---- stream hints ---- */

static gboolean block_inside(const QsRect *b, const QsRect *r)
{
    return b->x >= r->x && b->y >= r->y &&
           (int64_t)b->x + b->width <= (int64_t)r->x + r->width &&
           (int64_t)b->y + b->height <= (int64_t)r->y + r->height;
}

static void apply_streams(QsScheduler *s, int64_t now_us)
{
    uint32_t cols = qs_damage_cols(s->damage), rows = qs_damage_rows(s->damage);

    for (uint32_t r = 0; r < rows; r++) {
        for (uint32_t c = 0; c < cols; c++) {
            QsRect b = qs_damage_block_rect(s->damage, c, r, 1, 1);
            gboolean ex = FALSE;

            for (unsigned i = 0; i < QS_SCHED_MAX_STREAMS && !ex; i++) {
                ex = s->streams[i].used && block_inside(&b, &s->streams[i].rect);
            }
            qs_damage_set_excluded(s->damage, c, r, ex, now_us);
        }
    }
    s->add_gen++;
}

gboolean qs_scheduler_stream_set(QsScheduler *s, uint32_t id,
                                 const QsRect *rect, int64_t now_us)
{
    StreamHint *slot = NULL;

    if (!s->damage) {
        return FALSE;
    }
    for (unsigned i = 0; i < QS_SCHED_MAX_STREAMS; i++) {
        if (s->streams[i].used && s->streams[i].id == id) {
            slot = &s->streams[i];
            break;
        }
        if (!s->streams[i].used && !slot) {
            slot = &s->streams[i];
        }
    }
    if (!slot) {
        return FALSE;
    }
    *slot = (StreamHint){ TRUE, id, *rect };
    apply_streams(s, now_us);
    return TRUE;
}

void qs_scheduler_stream_clear(QsScheduler *s, uint32_t id, int64_t now_us)
{
    if (!s->damage) {
        return;
    }
    for (unsigned i = 0; i < QS_SCHED_MAX_STREAMS; i++) {
        if (s->streams[i].used && s->streams[i].id == id) {
            s->streams[i].used = FALSE;
            apply_streams(s, now_us);
            return;
        }
    }
}
