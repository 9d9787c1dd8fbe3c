/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsSurfaceMap: qemu's shared surface file, checked and mapped read-only. */
#include "display/qs-surface-map.h"

#include <errno.h>
#include <gio/gio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "screen/qs-screen.h"

/* MAP_SHARED so later UpdateMaps see the guest's new pixels. The size is
 * checked against the file now; qemu need not seal it, so a qemu that
 * shrank it later could fault us (a qemu can as well crash its VM). */
gboolean qs_surface_map_open(QsSurfaceMap *map, int fd, uint32_t offset,
                             uint32_t width, uint32_t height, uint32_t stride,
                             uint32_t format, GError **error)
{
    long page = sysconf(_SC_PAGESIZE);
    uint64_t len = (uint64_t)stride * height;
    uint64_t page_off = offset - offset % (uint64_t)page;
    struct stat st;
    void *base;

    if (width == 0 || height == 0 || width > QS_SCREEN_MAX_SIDE ||
        height > QS_SCREEN_MAX_SIDE || stride < (uint64_t)width * 4 ||
        len > (uint64_t)QS_SCREEN_MAX_AREA * 4 * 2) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "surface %ux%u stride %u out of range", width, height,
                    stride);
        return FALSE;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
        (uint64_t)st.st_size < (uint64_t)offset + len) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "the passed fd does not hold %" G_GUINT64_FORMAT
                    " bytes at offset %u", len, offset);
        return FALSE;
    }
    base = mmap(NULL, (size_t)(offset - page_off + len), PROT_READ,
                MAP_SHARED, fd, (off_t)page_off);
    if (base == MAP_FAILED) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                    "mmap failed: %s", g_strerror(errno));
        return FALSE;
    }
    map->base = base;
    map->base_len = (size_t)(offset - page_off + len);
    map->surface = map->base + (offset - page_off);
    map->surface_len = (size_t)len;
    map->width = width;
    map->height = height;
    map->stride = stride;
    map->format = format;
    return TRUE;
}

void qs_surface_map_close(QsSurfaceMap *map)
{
    if (map->base) {
        munmap(map->base, map->base_len);
    }
    memset(map, 0, sizeof(*map));
}

void qs_surface_map_trim(QsSurfaceMap *map)
{
    if (map->base && !map->trimmed) {
        /* A shared mapping: the pages stay qemu's, with their contents. */
        madvise(map->base, map->base_len, MADV_DONTNEED);
        map->trimmed = TRUE;
    }
}
