/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsRect: a rectangle of pixels, the one rectangle every layer speaks. */
#pragma once

#include <glib.h>
#include <stdint.h>

/* Signed, so a rectangle being built or clipped may start left of or above
 * the surface; every rectangle handed between layers lies inside it. */
typedef struct {
    int32_t x, y, width, height;
} QsRect;

static inline gboolean qs_rect_overlap(const QsRect *a, const QsRect *b)
{
    return a->x < b->x + b->width && b->x < a->x + a->width &&
           a->y < b->y + b->height && b->y < a->y + a->height;
}

/* `inner` lies entirely inside `outer`. */
static inline gboolean qs_rect_contains(const QsRect *outer, const QsRect *inner)
{
    return inner->x >= outer->x && inner->y >= outer->y &&
           inner->x + inner->width <= outer->x + outer->width &&
           inner->y + inner->height <= outer->y + outer->height;
}

static inline QsRect qs_rect_union(const QsRect *a, const QsRect *b)
{
    int32_t x0 = MIN(a->x, b->x), y0 = MIN(a->y, b->y);
    int32_t x1 = MAX(a->x + a->width, b->x + b->width);
    int32_t y1 = MAX(a->y + a->height, b->y + b->height);

    return (QsRect){ x0, y0, x1 - x0, y1 - y0 };
}
