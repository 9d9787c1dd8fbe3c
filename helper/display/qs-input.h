/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Keyboard and mouse events out to qemu; all calls asynchronous. */
#pragma once

#include <gio/gio.h>
#include <stdint.h>

#include "display/qs-input-map.h"

typedef struct QsInput QsInput;

/* Keyboard LEDs as qemu reports them (Keyboard.Modifiers). */
#define QS_INPUT_LED_SCROLL (1u << 0)
#define QS_INPUT_LED_NUM (1u << 1)
#define QS_INPUT_LED_CAPS (1u << 2)

/* Main context. `what` says which changed. */
typedef enum {
    QS_INPUT_CHANGED_ABSOLUTE,
    QS_INPUT_CHANGED_MODIFIERS,
} QsInputChange;
typedef void (*QsInputChangedFunc)(QsInput *input, QsInputChange what,
                                   gpointer user_data);

/* Creates the Keyboard/Mouse proxies (synchronously: startup only). */
QsInput *qs_input_new(GDBusConnection *conn, const char *dest,
                      const char *console_path, GError **error);
void qs_input_free(QsInput *input);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsInput, qs_input_free)

void qs_input_set_changed_func(QsInput *input, QsInputChangedFunc func,
                               gpointer user_data);

/* Main thread. Nothing waits for qemu: errors are logged, rate-limited. */
void qs_input_key(QsInput *input, uint32_t qnum, gboolean down);
void qs_input_button(QsInput *input, uint32_t button, gboolean down);
/* Press + release of QS_BUTTON_WHEEL_UP/DOWN per step. */
void qs_input_wheel(QsInput *input, int steps);
/* Presses/releases what differs from the last mask (SPICE layout). */
void qs_input_buttons(QsInput *input, uint32_t mask);
/* Clamped to the console size; dropped (debug log) while relative. */
void qs_input_motion_abs(QsInput *input, int64_t x, int64_t y,
                         uint32_t console_width, uint32_t console_height);
/* Dropped while absolute. */
void qs_input_motion_rel(QsInput *input, int32_t dx, int32_t dy);

gboolean qs_input_is_absolute(QsInput *input);
uint32_t qs_input_get_modifiers(QsInput *input);
