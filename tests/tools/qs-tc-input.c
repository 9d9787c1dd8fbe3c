/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The key and click commands: input sent through the inputs channel. */
#include "qs-tc.h"

int qs_tc_cmd_key(QsTc *tc, const guint *codes, guint n)
{
    if (!tc->inputs) {
        qs_tc_fail(tc, QS_TC_EXIT_UNSUPPORTED, "key: the server offers no inputs channel");
        return tc->fail_status;
    }
    /* AT set-1 make codes; spice-gtk adds the break code (|0x80) itself and
     * treats values above 0xff as 0xe0-prefixed extended keys */
    for (guint i = 0; i < n; i++)
        spice_inputs_channel_key_press_and_release(tc->inputs, codes[i]);
    if (!qs_tc_flush(tc, SPICE_CHANNEL(tc->inputs)) && !tc->fail_status)
        qs_tc_fail(tc, QS_TC_EXIT_IO, "key: flushing the inputs channel failed");
    return tc->fail_status;
}

static gboolean client_mode(QsTc *tc, gpointer data)
{
    (void)data;
    return qs_tc_mouse_mode(tc) == SPICE_MOUSE_MODE_CLIENT;
}

static int button_mask(int button)
{
    switch (button) {
    case SPICE_MOUSE_BUTTON_LEFT: return SPICE_MOUSE_BUTTON_MASK_LEFT;
    case SPICE_MOUSE_BUTTON_MIDDLE: return SPICE_MOUSE_BUTTON_MASK_MIDDLE;
    case SPICE_MOUSE_BUTTON_RIGHT: return SPICE_MOUSE_BUTTON_MASK_RIGHT;
    default: return 0;
    }
}

int qs_tc_cmd_click(QsTc *tc, int x, int y, int button)
{
    int mask = button_mask(button);

    if (!tc->inputs || !tc->main) {
        qs_tc_fail(tc, QS_TC_EXIT_UNSUPPORTED, "click: the server offers no inputs channel");
        return tc->fail_status;
    }
    if (!mask) {
        qs_tc_fail(tc, QS_TC_EXIT_USAGE, "click: button must be 1 (left), 2 (middle) or 3 (right)");
        return tc->fail_status;
    }
    /* an absolute position means nothing in server mode, where the server
     * only takes relative motion; ask for client mode and give up if the
     * guest has no absolute pointing device */
    if (qs_tc_mouse_mode(tc) != SPICE_MOUSE_MODE_CLIENT) {
        spice_main_channel_request_mouse_mode(tc->main, SPICE_MOUSE_MODE_CLIENT);
        if (!qs_tc_wait(tc, client_mode, NULL, MIN((gint64)tc->timeout_s, 2) * G_USEC_PER_SEC)) {
            if (!tc->fail_status)
                qs_tc_fail(tc, QS_TC_EXIT_UNSUPPORTED,
                           "click: server stays in %s mouse mode (no absolute pointer in the guest?)",
                           qs_tc_mouse_mode_name(qs_tc_mouse_mode(tc)));
            return tc->fail_status;
        }
    }
    spice_inputs_channel_position(tc->inputs, x, y, 0, 0);
    spice_inputs_channel_button_press(tc->inputs, button, mask);
    spice_inputs_channel_button_release(tc->inputs, button, 0);
    if (!qs_tc_flush(tc, SPICE_CHANNEL(tc->inputs)) && !tc->fail_status)
        qs_tc_fail(tc, QS_TC_EXIT_IO, "click: flushing the inputs channel failed");
    return tc->fail_status;
}
