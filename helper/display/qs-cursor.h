/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The guest cursor as qemu reports it: shape and position, thread-safe. */
#pragma once

#include <glib.h>
#include <stdint.h>

/* Larger cursors are refused (SPICE clients cap around 512 too). */
#define QS_CURSOR_MAX_SIDE 512

typedef struct QsCursor QsCursor;

typedef struct {
    int32_t width, height;
    int32_t hot_x, hot_y;
    GBytes *pixels;       /* width*height ARGB32 (B,G,R,A bytes), or NULL
                           * when no shape was defined yet */
    uint64_t serial;      /* +1 per CursorDefine */
} QsCursorShape;

typedef struct {
    int32_t x, y;
    gboolean visible;
    uint64_t serial;      /* +1 per MouseSet */
} QsCursorPosition;

/* Runs on the listener thread after each change: must be quick. */
typedef void (*QsCursorChangedFunc)(QsCursor *cursor, gboolean shape,
                                    gpointer user_data);

QsCursor *qs_cursor_new(void);
void qs_cursor_free(QsCursor *cursor);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsCursor, qs_cursor_free)

/* Producer (listener thread). Validates qemu's arguments. */
gboolean qs_cursor_define(QsCursor *cursor, int32_t width, int32_t height,
                          int32_t hot_x, int32_t hot_y, const uint8_t *data,
                          size_t size, GError **error);
void qs_cursor_set_position(QsCursor *cursor, int32_t x, int32_t y,
                            gboolean visible);

/* Consumer (any thread): copies; free shape->pixels with g_bytes_unref. */
void qs_cursor_get_shape(QsCursor *cursor, QsCursorShape *shape);
void qs_cursor_get_position(QsCursor *cursor, QsCursorPosition *pos);
void qs_cursor_set_changed_func(QsCursor *cursor, QsCursorChangedFunc func,
                                gpointer user_data);
