/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Pure mappings from SPICE input values to qemu's D-Bus input values. */
#pragma once

#include <glib.h>
#include <stdint.h>

/* qemu Mouse buttons (org.qemu.Display1.Mouse.Press/Release). */
enum {
    QS_BUTTON_LEFT = 0,
    QS_BUTTON_MIDDLE = 1,
    QS_BUTTON_RIGHT = 2,
    QS_BUTTON_WHEEL_UP = 3,
    QS_BUTTON_WHEEL_DOWN = 4,
    QS_BUTTON_SIDE = 5,
    QS_BUTTON_EXTRA = 6,
    QS_BUTTON_COUNT = 7,
};

/* qnum of the Pause key (its scan code sequence starts with 0xe1). */
#define QS_QNUM_PAUSE 0xc6

/* A SPICE key code (the scan code bytes, first byte lowest: 0x1e, 0x9e,
 * 0x48e0, 0xc8e0) to qemu's qnum (XT set 1, 0x80|code for e0 keys) and
 * whether it is a release. FALSE for codes that name no key. */
gboolean qs_input_scancode_to_qnum(uint32_t code, uint32_t *ret_qnum,
                                   gboolean *ret_release);

/* A SPICE button (SPICE_MOUSE_BUTTON_LEFT = 1 ... EXTRA = 7) to qemu's.
 * FALSE for anything else. */
gboolean qs_input_spice_button(uint32_t spice_button, uint32_t *ret_button);

/* The qemu buttons whose state differs between two SPICE button masks
 * (bit i = qemu button i, which is how SPICE lays them out); returns how
 * many were written to `changed` (at most QS_BUTTON_COUNT), each with
 * `pressed[i]` TRUE for a press. Releases come first. */
unsigned qs_input_button_changes(uint32_t old_mask, uint32_t new_mask,
                                 uint32_t changed[QS_BUTTON_COUNT],
                                 gboolean pressed[QS_BUTTON_COUNT]);

/* An absolute position clamped into a width x height console (qemu refuses
 * x >= width); FALSE when the console has no size yet. */
gboolean qs_input_clamp_abs(int64_t x, int64_t y, uint32_t width,
                            uint32_t height, uint32_t *ret_x, uint32_t *ret_y);
