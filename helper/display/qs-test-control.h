/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Test-only control socket (built with -Dtest_controls=true only). */
#pragma once

#include <glib.h>

#include "display/qs-display.h"

typedef struct QsTestControl QsTestControl;

/*
 * A unix socket at `path` taking one command per line, answering one line
 * ("ok ..." or "error ..."):
 *   dump             the screen copy as a binary PPM: the reply line
 *                    "ok WxH serial=S bytes=N" is followed by N bytes
 *   heat             hot blocks now: "ok serial=S frames=F size=WxH
 *                    blocks=BXxBY n_hot=N box=X,Y,W,H hot=I,I,..." (block
 *                    indices; F: qemu's frames received by then)
 *   stall SECONDS    block the listener thread (at most 60 s)
 *   watchdog on|off  enable / disable the lag watchdog
 *   stats            listener counters
 *   key QNUM         press and release a key (qnum, e.g. 0x1e for A)
 *   button N         press and release mouse button N (0 left .. 6 extra)
 *   abs X Y          absolute pointer motion (console pixels)
 *   rel DX DY        relative pointer motion
 *   input            "ok absolute=0|1 modifiers=N" (keyboard LEDs)
 */
QsTestControl *qs_test_control_new(const char *path, QsDisplay *display,
                                   GError **error);
void qs_test_control_free(QsTestControl *tc);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsTestControl, qs_test_control_free)
