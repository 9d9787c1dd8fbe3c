/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The helper's own copy of a console: pixels, changed blocks, heat. */
#pragma once

#include <glib.h>
#include <stdint.h>

/*
 * Producer side (helper/display, on the listener thread). Every call validates
 * its arguments against the current surface and the buffer it is given; a bad
 * call returns FALSE with a GError (QS_SCREEN_ERROR) naming the problem and
 * changes nothing. `now_us` is g_get_monotonic_time() or a fake clock.
 *
 * Pixels are stored as 32-bit x8r8g8b8 (B, G, R, X bytes in memory), which is
 * qemu's PIXMAN_x8r8g8b8 and SPICE's 32_xRGB.
 */

#define QS_SCREEN_BLOCK 16          /* side of a change/heat block, pixels */
#define QS_SCREEN_MAX_SIDE 16384    /* larger surfaces are refused */

#define QS_PIXMAN_X8R8G8B8 0x20020888u
#define QS_PIXMAN_A8R8G8B8 0x20028888u

typedef struct QsScreen QsScreen;

#define QS_SCREEN_ERROR (qs_screen_error_quark())
GQuark qs_screen_error_quark(void);

typedef enum {
    QS_SCREEN_ERROR_INVALID,      /* a size, stride, rectangle or length is wrong */
    QS_SCREEN_ERROR_UNSUPPORTED,  /* a pixel format we do not handle */
    QS_SCREEN_ERROR_NO_SURFACE,   /* an update before any scanout */
} QsScreenError;

QsScreen *qs_screen_new(void);
void qs_screen_free(QsScreen *screen);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsScreen, qs_screen_free)

/* A whole surface. Same size as before: a full-frame update; a new size: a new
 * surface (every consumer will see a new surface serial). */
gboolean qs_screen_scanout(QsScreen *screen, uint32_t width, uint32_t height,
                           uint32_t stride, uint32_t pixman_format,
                           const uint8_t *data, size_t size, int64_t now_us,
                           GError **error);

/* A rectangle whose first pixel is data[0]. */
gboolean qs_screen_update(QsScreen *screen, int32_t x, int32_t y,
                          int32_t width, int32_t height, uint32_t stride,
                          uint32_t pixman_format, const uint8_t *data,
                          size_t size, int64_t now_us, GError **error);

/* A rectangle taken from a whole mapped surface (Listener.Unix.Map): `map`
 * holds the full surface, `map_size` bytes, which the guest may be writing
 * while we copy; the rows are copied out before they are compared. */
gboolean qs_screen_update_from_map(QsScreen *screen, const uint8_t *map,
                                   size_t map_size, uint32_t map_width,
                                   uint32_t map_height, uint32_t map_stride,
                                   uint32_t pixman_format, int32_t x, int32_t y,
                                   int32_t width, int32_t height,
                                   int64_t now_us, GError **error);

/* qemu said the console's size changed (qemu 7.2 shows a resize only as a
 * Width/Height property change): start a new, black surface of that size. */
gboolean qs_screen_resize(QsScreen *screen, uint32_t width, uint32_t height,
                          int64_t now_us, GError **error);

/* The console has no surface (Listener.Disable). */
void qs_screen_disable(QsScreen *screen);
