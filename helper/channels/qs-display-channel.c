/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The display channel: the primary surface, then the screen's damage as banded DRAW_COPY messages. */
#include "channels/qs-msg.h"
#include "channels/qs-session.h"

#include <spice/enums.h>
#include <spice/protocol.h>

/* No display message above this: Kerbside and Ryll cap messages (16 MiB),
 * and smaller messages keep input and cursor traffic from waiting behind a
 * full frame on the same link. */
#define MAX_MESSAGE (256u * 1024u)
#define MAX_BAND_BYTES (MAX_MESSAGE - QS_DRAW_COPY_HEADER_SIZE - QS_BITMAP_HEADER_SIZE)

typedef struct {
    QsChannel base;
    QsScreen *screen;
    QsScreenWatch *watch;
    gboolean init_received;     /* DISPLAY_INIT: the client is ready */
    gboolean pumping;

    gboolean surface_created;
    uint64_t serial;
    uint32_t width, height;

    /* What is still to send of the last damage taken: rectangles, the row
     * reached in the current one, and whether MONITORS_CONFIG + MARK follow
     * (after the first full image of a surface). New damage accumulates in
     * the watch meanwhile, so a slow client gets fewer, fresher updates. */
    GArray *todo;               /* QsScreenRect */
    guint todo_pos;
    int32_t band_y;
    gboolean mark_pending;

    uint8_t *band;              /* packed pixels of one band */
    uint64_t image_id;
    gboolean prefer_bitmap;     /* PREFERRED_COMPRESSION OFF */
} QsDisplayChannel;

static QsImageCodec codec_for(QsDisplayChannel *dc)
{
    /* spice-gtk decodes LZ4 whenever it advertises the cap (checked
     * pixel-exact, spice-protocol.md §3.3). */
    if (!dc->prefer_bitmap &&
        qs_channel_has_cap(&dc->base, SPICE_DISPLAY_CAP_LZ4_COMPRESSION)) {
        return QS_IMAGE_CODEC_LZ4;
    }
    return QS_IMAGE_CODEC_BITMAP;
}

static void drop_todo(QsDisplayChannel *dc)
{
    g_array_set_size(dc->todo, 0);
    dc->todo_pos = 0;
    dc->band_y = 0;
}

static void destroy_surface(QsDisplayChannel *dc)
{
    if (dc->surface_created) {
        qs_channel_send(&dc->base, SPICE_MSG_DISPLAY_SURFACE_DESTROY,
                        qs_msg_surface_destroy(0));
        dc->surface_created = FALSE;
    }
    drop_todo(dc);
    dc->mark_pending = FALSE;
}

static void take_damage(QsDisplayChannel *dc, const QsScreenDamage *damage)
{
    if (!damage->enabled) {
        destroy_surface(dc);
        return;
    }
    drop_todo(dc);
    if (damage->new_surface || !dc->surface_created || damage->serial != dc->serial ||
        damage->width != dc->width || damage->height != dc->height) {
        /* Resize: SURFACE_DESTROY, SURFACE_CREATE, full image,
         * MONITORS_CONFIG, MARK (spice-protocol.md §3.4). */
        QsScreenRect all = { 0, 0, (int32_t)damage->width, (int32_t)damage->height };

        destroy_surface(dc);
        dc->serial = damage->serial;
        dc->width = damage->width;
        dc->height = damage->height;
        qs_channel_send(&dc->base, SPICE_MSG_DISPLAY_SURFACE_CREATE,
                        qs_msg_surface_create(0, dc->width, dc->height,
                                              SPICE_SURFACE_FMT_32_xRGB,
                                              SPICE_SURFACE_FLAGS_PRIMARY));
        dc->surface_created = TRUE;
        g_debug("display: surface %ux%u, images as %s", dc->width, dc->height,
                qs_image_codec_name(codec_for(dc)));
        g_array_append_val(dc->todo, all);
        dc->mark_pending = TRUE;
        return;
    }
    g_autoptr(GArray) rects = qs_screen_damage_rects(damage);
    g_array_append_vals(dc->todo, rects->data, rects->len);
}

/* One DRAW_COPY of at most MAX_MESSAGE bytes from the current rectangle. */
static void send_band(QsDisplayChannel *dc)
{
    const QsScreenRect *r = &g_array_index(dc->todo, QsScreenRect, dc->todo_pos);
    size_t row = (size_t)r->width * 4;
    int32_t rows = (int32_t)MIN((size_t)(r->height - dc->band_y), MAX(1, MAX_BAND_BYTES / row));
    QsScreenRect band = { r->x, r->y + dc->band_y, r->width, rows };
    QsPixelRect pixels = { dc->band, row, (uint32_t)r->width, (uint32_t)rows };
    g_autoptr(GError) error = NULL;

    if (!qs_screen_read(dc->screen, dc->serial, &band, dc->band, row, &error)) {
        /* The surface changed under us (STALE): the watch reports the new
         * one on the next take, which redraws everything. */
        g_debug("display: dropping stale damage: %s", error->message);
        drop_todo(dc);
        dc->mark_pending = FALSE;
        return;
    }
    qs_channel_send(&dc->base, SPICE_MSG_DISPLAY_DRAW_COPY,
                    qs_msg_draw_copy(0, band.x, band.y, &pixels, codec_for(dc),
                                     ++dc->image_id, NULL));
    dc->band_y += rows;
    if (dc->band_y >= r->height) {
        dc->todo_pos++;
        dc->band_y = 0;
    }
}

static void send_mark(QsDisplayChannel *dc)
{
    if (qs_channel_has_cap(&dc->base, SPICE_DISPLAY_CAP_MONITORS_CONFIG)) {
        QsMonitor head = { 0, 0, dc->width, dc->height, 0, 0, 0 };

        qs_channel_send(&dc->base, SPICE_MSG_DISPLAY_MONITORS_CONFIG,
                        qs_msg_monitors_config(&head, 1, 1));
    }
    qs_channel_send(&dc->base, SPICE_MSG_DISPLAY_MARK, NULL);
    dc->mark_pending = FALSE;
    qs_channel_ping(&dc->base, g_get_monotonic_time());
}

/* Sends while the connection has room; called on DISPLAY_INIT, when the
 * screen changed, and when the queue drained or an ACK opened the window. */
void qs_display_channel_pump(QsChannel *ch)
{
    QsDisplayChannel *dc = (QsDisplayChannel *)ch;

    if (!dc->init_received || dc->pumping) {
        return;
    }
    dc->pumping = TRUE;
    while (qs_channel_can_send(ch)) {
        if (dc->todo_pos < dc->todo->len) {
            send_band(dc);
        } else if (dc->mark_pending) {
            send_mark(dc);
        } else {
            g_autoptr(QsScreenDamage) damage = qs_screen_watch_take(dc->watch);

            if (!damage) {
                break;
            }
            take_damage(dc, damage);
        }
    }
    dc->pumping = FALSE;
}

static gboolean display_handle(QsChannel *ch, const QsClientMsg *msg, GError **error)
{
    QsDisplayChannel *dc = (QsDisplayChannel *)ch;

    (void)error;
    switch (msg->type) {
    case SPICE_MSGC_DISPLAY_INIT:
        dc->init_received = TRUE;
        qs_display_channel_pump(ch);
        break;
    case SPICE_MSGC_DISPLAY_PREFERRED_COMPRESSION:
        dc->prefer_bitmap = msg->u.compression == SPICE_IMAGE_COMPRESSION_OFF;
        break;
    default:
        /* STREAM_REPORT, PREFERRED_VIDEO_CODEC_TYPE: no streams yet;
         * GL_DRAW_DONE: no GL scanout over TCP. */
        break;
    }
    return TRUE;
}

static void display_writable(QsChannel *ch)
{
    qs_display_channel_pump(ch);
}

static void display_finalize(QsChannel *ch)
{
    QsDisplayChannel *dc = (QsDisplayChannel *)ch;

    qs_screen_watch_free(dc->watch);
    g_array_unref(dc->todo);
    g_free(dc->band);
}

static const QsChannelClass display_class = {
    .name = "display",
    .parse = qs_display_msg_parse,
    .handle = display_handle,
    .writable = display_writable,
    .finalize = display_finalize,
};

QsChannel *qs_display_channel_new(QsSession *session, QsConn *conn)
{
    QsDisplayChannel *dc = (QsDisplayChannel *)qs_channel_new(
        &display_class, sizeof(QsDisplayChannel), session, conn);

    dc->screen = qs_channels_screen(session->hub);
    dc->watch = qs_screen_watch_new(dc->screen);
    dc->todo = g_array_new(FALSE, FALSE, sizeof(QsScreenRect));
    dc->band = g_malloc(MAX_BAND_BYTES);     /* a row is at most 64 KiB */
    qs_channel_set_ack(&dc->base, QS_CHANNEL_ACK_WINDOW);
    return &dc->base;
}
