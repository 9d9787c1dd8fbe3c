/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SPICE key codes, buttons and positions as qemu's Keyboard/Mouse want them. */

#include "display/qs-input-map.h"

gboolean qs_input_scancode_to_qnum(uint32_t code, uint32_t *ret_qnum,
                                   gboolean *ret_release)
{
    uint8_t b0 = code & 0xff, b1 = (code >> 8) & 0xff;
    uint32_t rest = code >> 16;

    if (b0 == 0xe0) {
        /* e0 2a / e0 aa are fake shifts some keyboards add: not a key. */
        if (rest != 0 || (b1 & 0x7f) == 0 || (b1 & 0x7f) == 0x2a) {
            return FALSE;
        }
        *ret_qnum = 0x80 | (b1 & 0x7f);
        *ret_release = (b1 & 0x80) != 0;
        return TRUE;
    }
    if (b0 == 0xe1) {
        /* Pause (e1 1d 45 ...) has no release code of its own. */
        *ret_qnum = QS_QNUM_PAUSE;
        *ret_release = FALSE;
        return TRUE;
    }
    if ((code >> 8) != 0 || (b0 & 0x7f) == 0) {
        return FALSE;
    }
    *ret_qnum = b0 & 0x7f;
    *ret_release = (b0 & 0x80) != 0;
    return TRUE;
}

gboolean qs_input_spice_button(uint32_t spice_button, uint32_t *ret_button)
{
    if (spice_button < 1 || spice_button > QS_BUTTON_COUNT) {
        return FALSE;
    }
    *ret_button = spice_button - 1;
    return TRUE;
}

unsigned qs_input_button_changes(uint32_t old_mask, uint32_t new_mask,
                                 uint32_t changed[QS_BUTTON_COUNT],
                                 gboolean pressed[QS_BUTTON_COUNT])
{
    uint32_t diff = (old_mask ^ new_mask) & ((1u << QS_BUTTON_COUNT) - 1);
    unsigned n = 0;

    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t b = 0; b < QS_BUTTON_COUNT; b++) {
            gboolean down = (new_mask >> b) & 1;

            if ((diff >> b) & 1 && down == (pass == 1)) {
                changed[n] = b;
                pressed[n] = down;
                n++;
            }
        }
    }
    return n;
}

gboolean qs_input_clamp_abs(int64_t x, int64_t y, uint32_t width,
                            uint32_t height, uint32_t *ret_x, uint32_t *ret_y)
{
    if (width == 0 || height == 0) {
        return FALSE;
    }
    *ret_x = (uint32_t)CLAMP(x, 0, (int64_t)width - 1);
    *ret_y = (uint32_t)CLAMP(y, 0, (int64_t)height - 1);
    return TRUE;
}
