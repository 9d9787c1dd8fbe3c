/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fakes of display's QsCursor and QsInput: hold a cursor, log the input sent to "qemu". */
#include "fake-peers.h"
#include "encode/qs-encode-queue.h"

#include <string.h>

/* --- QsCursor ------------------------------------------------------------ */

struct QsCursor {
    QsCursorShape shape;
    QsCursorPosition pos;
    QsCursorChangedFunc func;
    gpointer user_data;
};

QsCursor *fake_cursor_new(void)
{
    return g_new0(QsCursor, 1);
}

void fake_cursor_free(QsCursor *cursor)
{
    g_clear_pointer(&cursor->shape.pixels, g_bytes_unref);
    g_free(cursor);
}

void fake_cursor_define(QsCursor *cursor, int32_t w, int32_t h, int32_t hot_x,
                        int32_t hot_y, uint8_t fill)
{
    gsize size = (gsize)w * h * 4;
    guint8 *px = g_malloc(size);

    memset(px, fill, size);
    g_clear_pointer(&cursor->shape.pixels, g_bytes_unref);
    cursor->shape = (QsCursorShape){ w, h, hot_x, hot_y, g_bytes_new_take(px, size),
                                     cursor->shape.serial + 1 };
    if (cursor->func) {
        cursor->func(cursor, TRUE, cursor->user_data);
    }
}

void fake_cursor_move(QsCursor *cursor, int32_t x, int32_t y, gboolean visible)
{
    cursor->pos = (QsCursorPosition){ x, y, visible, cursor->pos.serial + 1 };
    if (cursor->func) {
        cursor->func(cursor, FALSE, cursor->user_data);
    }
}

void qs_cursor_get_shape(QsCursor *cursor, QsCursorShape *shape)
{
    *shape = cursor->shape;
    if (shape->pixels) {
        g_bytes_ref(shape->pixels);
    }
}

void qs_cursor_get_position(QsCursor *cursor, QsCursorPosition *pos)
{
    *pos = cursor->pos;
}

void qs_cursor_set_changed_func(QsCursor *cursor, QsCursorChangedFunc func,
                                gpointer user_data)
{
    cursor->func = func;
    cursor->user_data = user_data;
}

/* --- QsInput ------------------------------------------------------------- */

struct QsInput {
    GString *log;
    gboolean absolute;
    uint32_t modifiers;
    QsInputChangedFunc func;
    gpointer user_data;
    void (*hook)(QsInput *, gpointer);
    gpointer hook_data;
};

void fake_input_set_hook(QsInput *input, void (*hook)(QsInput *, gpointer), gpointer data)
{
    input->hook = hook;
    input->hook_data = data;
}

static void logged(QsInput *input)
{
    if (input->hook) {
        input->hook(input, input->hook_data);
    }
}

QsInput *fake_input_new(gboolean absolute, uint32_t modifiers)
{
    QsInput *input = g_new0(QsInput, 1);

    input->log = g_string_new(NULL);
    input->absolute = absolute;
    input->modifiers = modifiers;
    return input;
}

void fake_input_free(QsInput *input)
{
    g_string_free(input->log, TRUE);
    g_free(input);
}

const char *fake_input_log(QsInput *input)
{
    return input->log->str;
}

void fake_input_clear(QsInput *input)
{
    g_string_truncate(input->log, 0);
}

void fake_input_set_absolute(QsInput *input, gboolean absolute)
{
    input->absolute = absolute;
    if (input->func) {
        input->func(input, QS_INPUT_CHANGED_ABSOLUTE, input->user_data);
    }
}

void fake_input_set_modifiers(QsInput *input, uint32_t modifiers)
{
    input->modifiers = modifiers;
    if (input->func) {
        input->func(input, QS_INPUT_CHANGED_MODIFIERS, input->user_data);
    }
}

void qs_input_set_changed_func(QsInput *input, QsInputChangedFunc func,
                               gpointer user_data)
{
    input->func = func;
    input->user_data = user_data;
}

void qs_input_key(QsInput *input, uint32_t qnum, gboolean down)
{
    g_string_append_printf(input->log, "key %c%02x;", down ? '+' : '-', qnum);
    logged(input);
}

void qs_input_button(QsInput *input, uint32_t button, gboolean down)
{
    g_string_append_printf(input->log, "button %c%u;", down ? '+' : '-', button);
    logged(input);
}

void qs_input_wheel(QsInput *input, int steps)
{
    g_string_append_printf(input->log, "wheel %d;", steps);
    logged(input);
}

void qs_input_buttons(QsInput *input, uint32_t mask)
{
    g_string_append_printf(input->log, "buttons %x;", mask);
    logged(input);
}

void qs_input_motion_abs(QsInput *input, int64_t x, int64_t y,
                         uint32_t console_width, uint32_t console_height)
{
    g_string_append_printf(input->log, "abs %" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
                           " in %ux%u;", x, y, console_width, console_height);
    logged(input);
}

void qs_input_motion_rel(QsInput *input, int32_t dx, int32_t dy)
{
    g_string_append_printf(input->log, "rel %d,%d;", dx, dy);
    logged(input);
}

gboolean qs_input_is_absolute(QsInput *input)
{
    return input->absolute;
}

uint32_t qs_input_get_modifiers(QsInput *input)
{
    return input->modifiers;
}

void fake_loop_run_pending(void)
{
    for (;;) {
        for (int i = 0; i < 1000 && g_main_context_iteration(NULL, FALSE); i++) {
        }
        if (!qs_encode_queue_pending_all()) {
            return;
        }
        /* An encode on a worker: its answer comes to this context. */
        g_main_context_iteration(NULL, TRUE);
    }
}
