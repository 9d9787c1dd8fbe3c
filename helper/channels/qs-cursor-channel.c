/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The cursor channel: the guest pointer's shape (ALPHA) and position from qemu's cursor state. */
#include "channels/qs-cursor-channel.h"
#include "wire/qs-msg.h"
#include "channels/qs-session.h"

#include <spice/enums.h>

typedef struct {
    QsChannel base;
    guint head;                 /* channel id: whose cursor */
    uint64_t shape_serial;      /* of the shape the client has, 0 = none */
    uint64_t position_serial;
    gboolean visible;           /* as the client shows it */
} QsCursorChannel;

/* qemu's shape as a SPICE ALPHA cursor; FALSE if there is none usable. */
static gboolean to_spice(const QsCursorShape *shape, QsSpiceCursor *out)
{
    if (!shape->pixels || shape->width <= 0 || shape->height <= 0 ||
        shape->width > (int32_t)QS_SPICE_CURSOR_MAX_SIDE ||
        shape->height > (int32_t)QS_SPICE_CURSOR_MAX_SIDE) {
        return FALSE;
    }
    *out = (QsSpiceCursor){
        .unique = shape->serial,
        .width = (uint16_t)shape->width,
        .height = (uint16_t)shape->height,
        .hot_x = (uint16_t)CLAMP(shape->hot_x, 0, shape->width - 1),
        .hot_y = (uint16_t)CLAMP(shape->hot_y, 0, shape->height - 1),
        .argb = shape->pixels,
    };
    return qs_spice_cursor_valid(out);
}

/* SPICE positions are hot-spot positions; qemu's MouseSet gives the
 * shape's top-left corner. */
static void hot_position(const QsCursorPosition *pos, const QsSpiceCursor *cursor,
                         int16_t *x, int16_t *y)
{
    int32_t hx = pos->x + (cursor ? cursor->hot_x : 0);
    int32_t hy = pos->y + (cursor ? cursor->hot_y : 0);

    *x = (int16_t)CLAMP(hx, G_MININT16, G_MAXINT16);
    *y = (int16_t)CLAMP(hy, G_MININT16, G_MAXINT16);
}

typedef struct {
    QsCursorShape shape;
    QsCursorPosition pos;
    QsSpiceCursor spice;
    gboolean has_shape;
} Snapshot;

static void snapshot(QsCursor *cursor, Snapshot *s)
{
    qs_cursor_get_shape(cursor, &s->shape);
    qs_cursor_get_position(cursor, &s->pos);
    s->has_shape = to_spice(&s->shape, &s->spice);
}

static void snapshot_clear(Snapshot *s)
{
    g_clear_pointer(&s->shape.pixels, g_bytes_unref);
}

static void send_set(QsCursorChannel *cc, Snapshot *s)
{
    int16_t x, y;

    hot_position(&s->pos, &s->spice, &x, &y);
    qs_channel_send(&cc->base, SPICE_MSG_CURSOR_SET,
                    qs_msg_cursor_set(x, y, s->pos.visible, &s->spice));
    cc->shape_serial = s->shape.serial;
    cc->visible = s->pos.visible;
}

/* Brings the client up to date with qemu's cursor. */
void qs_cursor_channel_changed(QsChannel *ch)
{
    QsCursorChannel *cc = (QsCursorChannel *)ch;
    QsCursor *cursor = qs_channel_context_head(ch->session->ctx, cc->head)->cursor;
    Snapshot s;
    gboolean moved;

    if (!cursor) {
        return;
    }
    snapshot(cursor, &s);
    moved = s.pos.serial != cc->position_serial;
    cc->position_serial = s.pos.serial;
    if (s.has_shape && (s.shape.serial != cc->shape_serial ||
                        (s.pos.visible && !cc->visible))) {
        send_set(cc, &s);               /* a new shape, or shown again */
    } else if (!s.pos.visible && cc->visible) {
        qs_channel_send(ch, SPICE_MSG_CURSOR_HIDE, NULL);
        cc->visible = FALSE;
    } else if (moved && cc->visible && ch->session->mouse_mode == SPICE_MOUSE_MODE_SERVER) {
        /* In client mode the client draws the pointer where the user's
         * is; moving it from here would fight the user (spice-server
         * forwards MOVE in server mode only, too). */
        int16_t x, y;

        hot_position(&s.pos, s.has_shape ? &s.spice : NULL, &x, &y);
        qs_channel_send(ch, SPICE_MSG_CURSOR_MOVE, qs_msg_cursor_move(x, y));
    }
    snapshot_clear(&s);
}

static gboolean cursor_handle(QsChannel *ch, const QsClientMsg *msg, GError **error)
{
    (void)ch;
    (void)msg;
    (void)error;
    return TRUE;        /* the parser lets base messages through only */
}

static const QsChannelClass cursor_class = {
    .name = "cursor",
    .parse = qs_cursor_msg_parse,
    .handle = cursor_handle,
    .mouse_mode = qs_cursor_channel_changed,
};

QsChannel *qs_cursor_channel_new(QsSession *session, QsConn *conn)
{
    QsCursorChannel *cc = (QsCursorChannel *)qs_channel_new(
        &cursor_class, sizeof(QsCursorChannel), session, conn);
    QsCursor *cursor;
    Snapshot s = { 0 };
    int16_t x = 0, y = 0;

    cc->head = qs_conn_get_link_info(conn)->channel_id;
    cursor = qs_channel_context_head(session->ctx, cc->head)->cursor;

    /* INIT first: spice-gtk ignores SET and MOVE before it. */
    if (cursor) {
        snapshot(cursor, &s);
        hot_position(&s.pos, s.has_shape ? &s.spice : NULL, &x, &y);
    }
    qs_channel_send(&cc->base, SPICE_MSG_CURSOR_INIT,
                    qs_msg_cursor_init(x, y, 0, 0, s.pos.visible,
                                       s.has_shape ? &s.spice : NULL));
    if (s.has_shape) {
        cc->shape_serial = s.shape.serial;
        cc->visible = s.pos.visible;
    }
    cc->position_serial = s.pos.serial;
    snapshot_clear(&s);
    return &cc->base;
}
