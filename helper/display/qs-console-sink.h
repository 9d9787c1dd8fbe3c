/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsConsoleSink: what a console's listeners write frames and cursors into. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "display/qs-cursor.h"
#include "screen/qs-screen.h"

/*
 * What a console's listeners write to. Owned by the console, outlives every
 * listener thread. `lock` is held around each screen write together with the
 * listener's "retired" check, so a listener that the watchdog replaced can
 * never write after its successor started.
 */
typedef struct {
    GMutex lock;
    QsScreen *screen;
    QsCursor *cursor;
    char *name;                     /* "console 0", for log lines */
    /* under lock (the size of the surface held is the screen's alone:
     * qs_console_sink_held()): */
    uint32_t console_width;         /* qemu's Console Width/Height */
    uint32_t console_height;
    gboolean lost;                  /* a frame was refused since the last
                                     * whole-surface Scanout */
} QsConsoleSink;

/* The size of the surface the screen holds, 0x0 for none. The screen owns
 * it; callers hold sink->lock so that no listener changes it meanwhile. */
static inline void qs_console_sink_held(QsConsoleSink *sink, uint32_t *width,
                                        uint32_t *height)
{
    QsScreenInfo info;

    qs_screen_get_info(sink->screen, &info);
    *width = info.width;
    *height = info.height;
}
