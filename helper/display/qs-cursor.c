/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Cursor shape and position kept for the cursor channel. */

#include "qs-cursor.h"

#include <gio/gio.h>

struct QsCursor {
    GMutex lock;
    /* Held while the changed func runs, so that replacing the func waits for
     * a call in progress on the listener thread to finish. */
    GMutex func_lock;
    QsCursorShape shape;
    QsCursorPosition pos;
    QsCursorChangedFunc func;
    gpointer user_data;
};

QsCursor *qs_cursor_new(void)
{
    QsCursor *cursor = g_new0(QsCursor, 1);

    g_mutex_init(&cursor->lock);
    g_mutex_init(&cursor->func_lock);
    return cursor;
}

void qs_cursor_free(QsCursor *cursor)
{
    if (!cursor) {
        return;
    }
    g_clear_pointer(&cursor->shape.pixels, g_bytes_unref);
    g_mutex_clear(&cursor->lock);
    g_mutex_clear(&cursor->func_lock);
    g_free(cursor);
}

static void notify(QsCursor *cursor, gboolean shape)
{
    QsCursorChangedFunc func;
    gpointer user_data;

    g_mutex_lock(&cursor->func_lock);
    g_mutex_lock(&cursor->lock);
    func = cursor->func;
    user_data = cursor->user_data;
    g_mutex_unlock(&cursor->lock);
    if (func) {
        func(cursor, shape, user_data);
    }
    g_mutex_unlock(&cursor->func_lock);
}

gboolean qs_cursor_define(QsCursor *cursor, int32_t width, int32_t height,
                          int32_t hot_x, int32_t hot_y, const uint8_t *data,
                          size_t size, GError **error)
{
    GBytes *pixels;

    if (width <= 0 || height <= 0 || width > QS_CURSOR_MAX_SIDE ||
        height > QS_CURSOR_MAX_SIDE) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "cursor size %dx%d out of range", width, height);
        return FALSE;
    }
    if (size != (size_t)width * (size_t)height * 4) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "cursor %dx%d carries %zu bytes, expected %zu", width,
                    height, size, (size_t)width * (size_t)height * 4);
        return FALSE;
    }
    /* A hot spot outside the shape would point the client elsewhere. */
    hot_x = CLAMP(hot_x, 0, width - 1);
    hot_y = CLAMP(hot_y, 0, height - 1);
    pixels = g_bytes_new(data, size);

    g_mutex_lock(&cursor->lock);
    g_clear_pointer(&cursor->shape.pixels, g_bytes_unref);
    cursor->shape.width = width;
    cursor->shape.height = height;
    cursor->shape.hot_x = hot_x;
    cursor->shape.hot_y = hot_y;
    cursor->shape.pixels = pixels;
    cursor->shape.serial++;
    g_mutex_unlock(&cursor->lock);
    notify(cursor, TRUE);
    return TRUE;
}

void qs_cursor_set_position(QsCursor *cursor, int32_t x, int32_t y,
                            gboolean visible)
{
    g_mutex_lock(&cursor->lock);
    cursor->pos.x = x;
    cursor->pos.y = y;
    cursor->pos.visible = visible;
    cursor->pos.serial++;
    g_mutex_unlock(&cursor->lock);
    notify(cursor, FALSE);
}

void qs_cursor_get_shape(QsCursor *cursor, QsCursorShape *shape)
{
    g_mutex_lock(&cursor->lock);
    *shape = cursor->shape;
    if (shape->pixels) {
        g_bytes_ref(shape->pixels);
    }
    g_mutex_unlock(&cursor->lock);
}

void qs_cursor_get_position(QsCursor *cursor, QsCursorPosition *pos)
{
    g_mutex_lock(&cursor->lock);
    *pos = cursor->pos;
    g_mutex_unlock(&cursor->lock);
}

void qs_cursor_set_changed_func(QsCursor *cursor, QsCursorChangedFunc func,
                                gpointer user_data)
{
    g_mutex_lock(&cursor->func_lock);
    g_mutex_lock(&cursor->lock);
    cursor->func = func;
    cursor->user_data = user_data;
    g_mutex_unlock(&cursor->lock);
    g_mutex_unlock(&cursor->func_lock);
}
