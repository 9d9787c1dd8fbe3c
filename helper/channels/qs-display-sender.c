/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The display send loop: damage in, pacer budget, scheduler picks, current pixels encoded as images. */
#include "channels/qs-display-private.h"

#include <spice/enums.h>
#include <string.h>

/*
 * Newest state wins: damage only marks blocks (the screen watch, then the
 * scheduler); pixels are read when the pacer has room and the scheduler
 * picks an item, so nothing stale waits anywhere but in the socket, which
 * the pacer keeps near one BDP. The client's ACK window is honoured by the
 * base channel (qs_channel_can_send) but set large enough never to bind.
 */

#define SAMPLE_MAX 1024u
#define PHOTO_DISTINCT_PCT 40u      /* distinct colours per 100 samples */
#define SLOW_IMAGE_US 100000        /* a lossless image this long on the link */

void qs_display_sender_init(QsDisplayChannel *dc)
{
    dc->sched = qs_scheduler_new();
    dc->bwe = qs_bwe_new();
    dc->pacer = qs_pacer_new();
    dc->e2e = qs_e2e_new();
    dc->frame_time = qs_frame_time_new();
}

void qs_display_sender_clear(QsDisplayChannel *dc)
{
    qs_scheduler_free(dc->sched);
    qs_bwe_free(dc->bwe);
    qs_pacer_free(dc->pacer);
    qs_e2e_free(dc->e2e);
    qs_frame_time_free(dc->frame_time);
    g_free(dc->changed_us);
    g_free(dc->lossy_us);
    g_free(dc->pixels);
    g_clear_pointer(&dc->heat, qs_screen_heat_free);
}

void qs_display_sender_reset(QsDisplayChannel *dc, int64_t now_us)
{
    qs_scheduler_reset(dc->sched, dc->serial, dc->width, dc->height, now_us);
    dc->cols = (dc->width + QS_SCREEN_BLOCK - 1) / QS_SCREEN_BLOCK;
    dc->rows = (dc->height + QS_SCREEN_BLOCK - 1) / QS_SCREEN_BLOCK;
    g_free(dc->changed_us);
    g_free(dc->lossy_us);
    dc->changed_us = g_new0(int64_t, (gsize)dc->cols * dc->rows);
    dc->lossy_us = g_new0(int64_t, (gsize)dc->cols * dc->rows);
}

void qs_display_send_probe(QsDisplayChannel *dc, int64_t now_us)
{
    uint32_t id = qs_channel_ping(&dc->base, now_us);

    qs_e2e_probe_sent(dc->e2e, now_us, id, dc->base.sent_bytes);
    dc->stats.messages++;
}

static void maybe_probe(QsDisplayChannel *dc, int64_t now_us, gboolean at_rest)
{
    /* A PING is a message like any other: the ACK window and the send
     * queue hold it too. */
    if (qs_channel_can_send(&dc->base) &&
        qs_e2e_probe_due(dc->e2e, dc->bwe, now_us, dc->base.sent_bytes, at_rest)) {
        qs_display_send_probe(dc, now_us);
    }
}

/* What the path holds: the socket's own queue, or, when the client's PONGs
 * say more is unread (a proxy buffers it where TCP_INFO cannot see), that. */
uint64_t qs_display_link_queued(QsDisplayChannel *dc, int64_t now_us)
{
    QsLinkFacts f;
    uint32_t lowat;
    uint64_t local, e2e;

    if (qs_conn_get_link_facts(dc->base.conn, &f)) {
        qs_bwe_on_facts(dc->bwe, now_us, &f);
        dc->stats.bytes_written = f.bytes_written;
    }
    lowat = qs_pacer_notsent_lowat(dc->bwe);
    if (lowat != dc->notsent_lowat) {
        dc->notsent_lowat = lowat;
        qs_conn_set_notsent_lowat(dc->base.conn, lowat);
    }
    local = (uint64_t)f.unsent_bytes + f.in_flight_bytes +
            qs_conn_get_queued_bytes(dc->base.conn) + dc->encoding_bytes;
    e2e = qs_e2e_in_flight(dc->e2e, dc->bwe, now_us, dc->base.sent_bytes) + dc->encoding_bytes;
    return MAX(local, e2e);
}

static void take_damage(QsDisplayChannel *dc, QsScreenDamage *d, int64_t now_us)
{
    if (!qs_display_ensure_surface(dc, d, now_us)) {
        return;
    }
    if (d->blocks_x != dc->cols || d->blocks_y != dc->rows) {
        return;
    }
    for (uint32_t i = 0; i < d->blocks_x * d->blocks_y; i++) {
        if (d->damaged[i]) {
            dc->changed_us[i] = d->newest_us;
        }
    }
    qs_display_streams_damage(dc, d);
    qs_scheduler_add_blocks(dc->sched, d->damaged, d->blocks_x, d->blocks_y,
                            d->blocks_x, now_us);
}

/* Cheap photo test on the pixels we already copied: distinct colours
 * among up to SAMPLE_MAX spread samples. Text, flat fills and UI have few;
 * photographs, video and smooth gradients many. */
static gboolean photographic(const uint8_t *px, uint32_t w, uint32_t h)
{
    uint64_t n = (uint64_t)w * h;
    uint64_t step = MAX(1, n / SAMPLE_MAX) | 1;
    uint32_t seen[4096 / 32] = { 0 };
    uint32_t samples = 0, distinct = 0;

    if (n < 1024) {
        return FALSE;
    }
    for (uint64_t i = 0; i < n && samples < SAMPLE_MAX; i += step, samples++) {
        uint32_t v;

        memcpy(&v, px + i * 4, 4);
        v &= 0xffffff;
        v = (v * 2654435761u) >> 20;
        if (!(seen[v / 32] & (1u << (v % 32)))) {
            seen[v / 32] |= 1u << (v % 32);
            distinct++;
        }
    }
    return distinct * 100 >= samples * PHOTO_DISTINCT_PCT;
}

/* JPEG quality from the link: 85 at 20 Mbit/s and above, down to 50. */
static int jpeg_quality(QsDisplayChannel *dc)
{
    uint64_t mbit = qs_bwe_bandwidth(dc->bwe) * 8 / 1000000;

    return (int)CLAMP(50 + (int64_t)mbit * 35 / 20, 50, 85);
}

static gboolean lossy_allowed(QsDisplayChannel *dc, const QsFlowItem *item,
                              const uint8_t *px)
{
    const QsRect r = item->rect;
    uint64_t raw = (uint64_t)r.width * r.height * 4;
    uint64_t bw = MAX(qs_bwe_bandwidth(dc->bwe), 1);
    uint32_t c0 = (uint32_t)r.x / QS_SCREEN_BLOCK, r0 = (uint32_t)r.y / QS_SCREEN_BLOCK;
    uint32_t c1 = (uint32_t)(r.x + r.width - 1) / QS_SCREEN_BLOCK;
    uint32_t r1 = (uint32_t)(r.y + r.height - 1) / QS_SCREEN_BLOCK;

    if (dc->prefer_bitmap || qs_display_streams_intersect(dc, &r)) {
        /* Next to a stream only the stream may be lossy. */
        return FALSE;
    }
    /* A repair (a block still lossy whose content has not changed since)
     * must be exact. */
    for (uint32_t y = r0; y <= r1; y++) {
        for (uint32_t x = c0; x <= c1; x++) {
            size_t i = (size_t)y * dc->cols + x;

            if (dc->lossy_us[i] && dc->changed_us[i] <= dc->lossy_us[i]) {
                return FALSE;
            }
        }
    }
    /* Animated content goes lossy only where the whole block moves, so text
     * beside an animation stays exact. */
    if (item->hot && !qs_display_rect_all_moving(dc, &r)) {
        return FALSE;
    }
    /* Cold content goes lossy only on a link measured slow (the initial
     * guess says nothing about the link). */
    if (!item->hot && (qs_bwe_rounds(dc->bwe) == 0 || raw * 1000000 / bw / 3 < SLOW_IMAGE_US)) {
        return FALSE;
    }
    return photographic(px, (uint32_t)r.width, (uint32_t)r.height);
}

/* Blocks entirely inside r now hold exact pixels (lossy_us 0) or lossy
 * ones sent at lossy_us; edge blocks partly covered keep what they had
 * unless the image was lossy. */
void qs_display_mark_exact(QsDisplayChannel *dc, const QsRect *r, int64_t lossy_us)
{
    uint32_t c0 = (uint32_t)r->x / QS_SCREEN_BLOCK, r0 = (uint32_t)r->y / QS_SCREEN_BLOCK;
    uint32_t c1 = (uint32_t)(r->x + r->width - 1) / QS_SCREEN_BLOCK;
    uint32_t r1 = (uint32_t)(r->y + r->height - 1) / QS_SCREEN_BLOCK;

    if (!dc->lossy_us || r->width <= 0 || r->height <= 0) {
        return;
    }
    for (uint32_t y = r0; y <= r1 && y < dc->rows; y++) {
        for (uint32_t x = c0; x <= c1 && x < dc->cols; x++) {
            gboolean inside = (int32_t)(x * QS_SCREEN_BLOCK) >= r->x &&
                              (int32_t)(y * QS_SCREEN_BLOCK) >= r->y &&
                              (int32_t)MIN((x + 1) * QS_SCREEN_BLOCK, dc->width) <= r->x + r->width &&
                              (int32_t)MIN((y + 1) * QS_SCREEN_BLOCK, dc->height) <= r->y + r->height;

            if (lossy_us || inside) {
                dc->lossy_us[(size_t)y * dc->cols + x] = lossy_us;
            }
        }
    }
}

/* Reads the item's current pixels and sends one DRAW_COPY; returns the
 * message size, 0 if the surface is gone (the next take redraws it). */
static uint32_t send_item(QsDisplayChannel *dc, const QsFlowItem *item, int64_t now_us)
{
    QsRect r = item->rect;
    size_t row = (size_t)r.width * 4, need = row * (size_t)r.height;
    QsPixelRect px;
    QsImageCodec codec, used;
    g_autoptr(GError) error = NULL;
    GBytes *msg;
    gsize size;

    if (need > dc->pixels_size) {
        g_free(dc->pixels);
        dc->pixels = g_malloc(need);
        dc->pixels_size = need;
    }
    if (!qs_screen_read(dc->screen, item->surface_serial, &r, dc->pixels, row, &error)) {
        g_debug("display: dropping stale item: %s", error->message);
        return 0;
    }
    px = (QsPixelRect){ dc->pixels, row, (uint32_t)r.width, (uint32_t)r.height };
    codec = !dc->prefer_bitmap &&
                    qs_channel_has_cap(&dc->base, SPICE_DISPLAY_CAP_LZ4_COMPRESSION)
                ? QS_IMAGE_CODEC_LZ4 : QS_IMAGE_CODEC_BITMAP;
    if (lossy_allowed(dc, item, dc->pixels)) {
        msg = qs_msg_draw_copy_jpeg(0, r.x, r.y, &px, jpeg_quality(dc), codec,
                                    ++dc->image_id, &used);
    } else {
        msg = qs_msg_draw_copy(0, r.x, r.y, &px, codec, ++dc->image_id, &used);
    }
    size = g_bytes_get_size(msg);
    qs_display_send(dc, SPICE_MSG_DISPLAY_DRAW_COPY, msg);
    qs_display_mark_exact(dc, &r, used == QS_IMAGE_CODEC_JPEG ? now_us : 0);
    dc->stats.images[used]++;
    dc->stats.image_bytes += size;
    return (uint32_t)MIN(size, G_MAXUINT32);
}

/* Lossy blocks that stayed still long enough go back to the scheduler,
 * without heat; lossy_allowed() then keeps them exact. */
static int64_t repair_scan(QsDisplayChannel *dc, int64_t now_us, gboolean link_idle)
{
    int64_t still = link_idle ? QS_DISPLAY_REPAIR_IDLE_US : QS_DISPLAY_REPAIR_US;
    int64_t next = 0;
    const QsDamage *dmg = qs_scheduler_damage(dc->sched);

    for (uint32_t y = 0; y < dc->rows; y++) {
        for (uint32_t x = 0; x < dc->cols; x++) {
            size_t i = (size_t)y * dc->cols + x;
            int64_t since = MAX(dc->lossy_us[i], dc->changed_us[i]);
            QsFlowItem item = { .surface_serial = dc->serial };

            if (!dc->lossy_us[i] || qs_damage_is_dirty(dmg, x, y) ||
                qs_damage_is_excluded(dmg, x, y)) {
                continue;
            }
            if (now_us - since < still) {
                next = next ? MIN(next, since + still) : since + still;
                continue;
            }
            item.rect = qs_damage_block_rect(dmg, x, y, 1, 1);
            qs_scheduler_requeue(dc->sched, &item, now_us);
            dc->stats.repairs++;
        }
    }
    return next;
}

/* Sends while the pacer gives budget; called on DISPLAY_INIT, screen
 * changes, socket writable, ACKs, finished encodes and the wake timer. */
void qs_display_channel_pump(QsChannel *ch)
{
    QsDisplayChannel *dc = (QsDisplayChannel *)ch;
    int64_t now = g_get_monotonic_time();
    g_autoptr(QsScreenDamage) damage = NULL;
    gboolean idle = FALSE;
    int64_t next = 0;

    if (!dc->init_received || dc->pumping || !ch->session || qs_conn_is_closed(ch->conn)) {
        return;
    }
    dc->pumping = TRUE;
    damage = qs_screen_watch_take(dc->watch);
    if (damage) {
        take_damage(dc, damage, now);
    }
    if (!dc->surface_created) {
        dc->pumping = FALSE;
        return;
    }
    qs_display_streams_detect(dc, now);
    if (now >= dc->next_repair_scan_us) {
        gboolean link_idle = qs_damage_dirty_count(qs_scheduler_damage(dc->sched)) == 0;
        int64_t r = repair_scan(dc, now, link_idle);

        dc->next_repair_scan_us = r ? r : now + QS_DISPLAY_REPAIR_US;
    }
    while (qs_channel_can_send(ch)) {
        QsPacerBudget budget, fast_only;
        QsFlowItem item;
        uint32_t n;

        maybe_probe(dc, now, FALSE);
        qs_pacer_budget(dc->pacer, dc->bwe, now, qs_display_link_queued(dc, now), &budget);
        /* Fast lane (a key press, a text line) before any video frame. */
        fast_only = budget;
        fast_only.bulk_bytes = 0;
        if (budget.fast_bytes > 0 &&
            qs_scheduler_next(dc->sched, now, &fast_only, &item) == QS_PICK_ITEM) {
            n = send_item(dc, &item, now);
            if (n) {
                qs_scheduler_feedback(dc->sched, &item, n);
            }
            continue;
        }
        if (qs_display_streams_send(dc, now, &budget)) {
            continue;
        }
        switch (qs_scheduler_next(dc->sched, now, &budget, &item)) {
        case QS_PICK_IDLE:
            qs_bwe_mark_app_limited(dc->bwe, dc->stats.bytes_written);
            qs_e2e_mark_app_limited(dc->e2e, dc->base.sent_bytes);
            idle = TRUE;
            break;
        case QS_PICK_BLOCKED:
            next = budget.fast_wake_us ? MIN(budget.wake_us ? budget.wake_us : G_MAXINT64,
                                             budget.fast_wake_us)
                                       : budget.wake_us;
            break;
        case QS_PICK_ITEM:
            n = send_item(dc, &item, now);
            if (n) {
                qs_scheduler_feedback(dc->sched, &item, n);
            }
            continue;
        }
        break;
    }
    if (idle && dc->mark_pending) {
        qs_display_send_mark(dc);
    }
    /* The tail of what went out gets its end-to-end ACK too. */
    maybe_probe(dc, now, TRUE);
    next = next ? MIN(next, dc->next_repair_scan_us) : dc->next_repair_scan_us;
    {
        int64_t s = qs_display_streams_deadline(dc, now);

        if (s) {
            next = next ? MIN(next, s) : s;
        }
    }
    dc->pumping = FALSE;
    qs_display_arm_wake(dc, next);
}
