/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qemu's shared surface (Listener.Unix.Map, qemu 9.2+), mapped read-only into the listener. */
#pragma once

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

/* All zero: nothing mapped. Owned by one listener; the console's sink lock
 * is held where the main thread may touch it too (qs_surface_map_trim). */
typedef struct {
    uint8_t *base;          /* mmap()ed, page aligned */
    size_t base_len;
    const uint8_t *surface; /* base + offset within the page */
    size_t surface_len;
    uint32_t width, height, stride, format;
    gboolean trimmed;       /* our page-table entries dropped while idle */
} QsSurfaceMap;

/* Maps `stride * height` bytes of `fd` at `offset` into `map` (which must
 * be empty); `fd` stays the caller's. */
gboolean qs_surface_map_open(QsSurfaceMap *map, int fd, uint32_t offset,
                             uint32_t width, uint32_t height, uint32_t stride,
                             uint32_t format, GError **error);
/* Unmaps and empties it; nothing to do when empty. */
void qs_surface_map_close(QsSurfaceMap *map);
/* Drops our page-table entries (once until the next update reads it), so
 * that an idle helper's RSS does not count qemu's framebuffer. */
void qs_surface_map_trim(QsSurfaceMap *map);
