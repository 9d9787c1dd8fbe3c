/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The helper's own copy of a console: pixels, changed blocks, heat. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "util/qs-rect.h"

/*
 * Producer side (helper/display, on the listener thread). Every call validates
 * its arguments against the current surface and the buffer it is given; a bad
 * call returns FALSE with a GError (QS_SCREEN_ERROR) naming the problem and
 * changes nothing. `now_us` is g_get_monotonic_time() or a fake clock.
 *
 * Pixels are stored as 32-bit x8r8g8b8 (B, G, R, X bytes in memory), which is
 * qemu's PIXMAN_x8r8g8b8 and SPICE's 32_xRGB.
 *
 * The producer is one thread at a time (calls are serialised by a lock of
 * their own); consumers (the API after the producer's) may run on any thread.
 */

#define QS_SCREEN_BLOCK 16          /* side of a change/heat block, pixels */
#define QS_SCREEN_MAX_SIDE 16384    /* larger surfaces are refused */
/* Also refused: more pixels than this (256 MiB of screen), so what qemu can
 * make us allocate stays bounded even at the maximum side. */
#define QS_SCREEN_MAX_AREA (64u * 1024u * 1024u)

#define QS_PIXMAN_X8R8G8B8 0x20020888u
#define QS_PIXMAN_A8R8G8B8 0x20028888u

typedef struct QsScreen QsScreen;

#define QS_SCREEN_ERROR (qs_screen_error_quark())
GQuark qs_screen_error_quark(void);

typedef enum {
    QS_SCREEN_ERROR_INVALID,      /* a size, stride, rectangle or length is wrong */
    QS_SCREEN_ERROR_UNSUPPORTED,  /* a pixel format we do not handle */
    QS_SCREEN_ERROR_NO_SURFACE,   /* an update before any scanout */
    QS_SCREEN_ERROR_STALE,        /* a read for a surface serial that is gone */
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

/*
 * Stored pixels: the X byte of every stored pixel is 0, whatever qemu sent
 * (a8r8g8b8's alpha and x8r8g8b8's padding are dropped), so a change of
 * padding or alpha alone is not a change.
 */

/* ------------------------------------------------------------------------
 * Consumer side (main loop, encoders; any thread).
 *
 * Nothing here queues frames. Each consumer owns a QsScreenWatch that
 * accumulates which blocks changed since its last take; at send time it takes
 * that damage and reads the newest pixels of those blocks. A surface serial
 * says which surface damage and pixels belong to: it changes on every new
 * surface (scanout of a new size, resize) and on disable.
 * ------------------------------------------------------------------------ */

typedef struct {
    uint64_t serial;     /* surface serial; never 0 once the screen exists */
    gboolean enabled;    /* FALSE: no surface (before the first scanout, or
                          * after disable); width/height are then 0 */
    uint32_t width, height;
    uint64_t commits;    /* grows with every change (a call may make several) */
} QsScreenInfo;

void qs_screen_get_info(QsScreen *screen, QsScreenInfo *info);

/* Copies `rect` of surface `serial` to dst (rows of rect->width*4 bytes,
 * dst_stride apart) under the screen's lock, which the producer waits for:
 * read what you are about to encode, not more (a full 1280x800 copy holds
 * it for a few hundred microseconds). Fails with QS_SCREEN_ERROR_STALE if the
 * surface is no longer `serial`, INVALID if rect is not inside it or
 * dst_stride is too small. */
gboolean qs_screen_read(QsScreen *screen, uint64_t serial,
                        const QsRect *rect, uint8_t *dst,
                        size_t dst_stride, GError **error);

/*
 * Change callbacks run on the producer's thread after each producer call
 * that changed pixels or the surface, outside the screen's lock: they may
 * call any consumer function, but must be quick (wake a main loop) and must
 * not add or remove callbacks. They run inside the producer call, so any lock
 * its caller holds around the call is held while they run. Removal waits for a running call to finish, so
 * after qs_screen_remove_changed_func returns the callback is not running.
 */
typedef void (*QsScreenChangedFunc)(QsScreen *screen, gpointer user_data);

guint qs_screen_add_changed_func(QsScreen *screen, QsScreenChangedFunc func,
                                 gpointer user_data);
void qs_screen_remove_changed_func(QsScreen *screen, guint id);

/* Per-consumer accumulated damage. A watch must be freed before its screen
 * and belongs to one consumer: it has no lock of its own. A new watch
 * reports the current state (the whole surface, or no surface) on its first
 * take. */
typedef struct QsScreenWatch QsScreenWatch;

typedef struct {
    uint64_t serial;          /* surface the damage belongs to */
    gboolean new_surface;     /* the surface changed since the last take (or
                               * this is the first take): redraw everything */
    gboolean enabled;         /* FALSE: the console has no surface now */
    uint32_t width, height;   /* surface size in pixels */
    uint32_t blocks_x, blocks_y;
    uint32_t n_damaged;       /* blocks set in `damaged` */
    uint8_t *damaged;         /* blocks_x * blocks_y bytes, row-major, 1 =
                               * changed since the last take */
    int64_t newest_us;        /* producer time of the newest change included */
} QsScreenDamage;

QsScreenWatch *qs_screen_watch_new(QsScreen *screen);
void qs_screen_watch_free(QsScreenWatch *watch);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsScreenWatch, qs_screen_watch_free)

/* The damage since the last take, or NULL if nothing changed. */
QsScreenDamage *qs_screen_watch_take(QsScreenWatch *watch);
void qs_screen_damage_free(QsScreenDamage *damage);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsScreenDamage, qs_screen_damage_free)

/* The damaged blocks as few rectangles (runs of blocks in a block row, merged
 * with identical runs below), clipped to the surface: a GArray of
 * QsRect. */
GArray *qs_screen_damage_rects(const QsScreenDamage *damage);

/*
 * Heat: how often each block changed recently, counted when qemu delivers
 * the change (the producer's now_us), never when anything is sent, so a slow
 * link cannot hide a video.
 *
 * Window: QS_SCREEN_HEAT_BUCKETS buckets of QS_SCREEN_HEAT_BUCKET_US, the
 * newest being the one now_us falls in (a window of 0.9 to 1 s). A block
 * counts at most once per QS_SCREEN_HEAT_MIN_INTERVAL_US, so one guest frame
 * split into several overlapping rectangles counts once.
 * Hot: at least QS_SCREEN_HEAT_HOT_COUNT counts in the window and a change in
 * the last QS_SCREEN_HEAT_MAX_GAP_US. At 30 fps that is the 8th frame (233 ms
 * after the first), at 24 fps 292 ms; below 8 fps (typing, a blinking
 * cursor, a clock) a block never gets hot; 200 ms after the changes stop it
 * is cold again. Why these numbers: qs-screen-heat.c.
 */
#define QS_SCREEN_HEAT_BUCKET_US 100000
#define QS_SCREEN_HEAT_BUCKETS 10
#define QS_SCREEN_HEAT_MIN_INTERVAL_US 4000
#define QS_SCREEN_HEAT_HOT_COUNT 8
#define QS_SCREEN_HEAT_MAX_GAP_US 200000

typedef struct {
    uint64_t serial;
    uint32_t width, height;
    uint32_t blocks_x, blocks_y;
    uint32_t n_hot;
    uint8_t *hot;             /* per block: 1 = hot */
    uint16_t *counts;         /* per block: counts in the window */
    int64_t *last_change_us;  /* per block: producer time of its last
                               * change, or of the surface's creation (e.g.
                               * to resend lossless after stillness) */
    QsRect *changed;    /* per block: the exact pixels (surface
                               * coordinates) changed since the block was last
                               * cold, i.e. had no count in the window;
                               * width 0 if none */
    QsRect hot_blocks;  /* bounding box of the hot blocks, clipped to the
                               * surface; width 0 if none */
    QsRect hot_pixels;  /* bounding box of `changed` over hot blocks */
} QsScreenHeat;

/* A copy of the heat as of now_us (same clock as the producer's now_us).
 * Without a surface: sizes 0, arrays NULL. */
QsScreenHeat *qs_screen_heat_snapshot(QsScreen *screen, int64_t now_us);
void qs_screen_heat_free(QsScreenHeat *heat);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsScreenHeat, qs_screen_heat_free)
