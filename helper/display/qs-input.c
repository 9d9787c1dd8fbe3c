/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Input out: org.qemu.Display1.Keyboard and .Mouse on the console object. */

#include "display/qs-input.h"

#include "display/qs-ratelimit.h"
#include "qs-dbus-display1.h"

struct QsInput {
    QemuDBusDisplay1Keyboard *keyboard;
    QemuDBusDisplay1Mouse *mouse;
    uint32_t buttons;
    QsInputChangedFunc func;
    gpointer user_data;
};

/* Replies come back on the main context; one limiter for all of them. */
static QsRateLimit error_rl;

static void on_done(GObject *source, GAsyncResult *res, gpointer data)
{
    g_autofree char *what = data;
    g_autoptr(GError) error = NULL;
    g_autoptr(GVariant) ret = g_dbus_proxy_call_finish(G_DBUS_PROXY(source),
                                                       res, &error);
    unsigned suppressed = 0;

    if (!ret && qs_ratelimit_allow(&error_rl, g_get_monotonic_time(),
                                   &suppressed)) {
        g_warning("input: %s failed: %s%s", what, error->message,
                  suppressed ? " (earlier errors suppressed)" : "");
    }
}

/* Through the plain proxy call so each reply can name its call in a log;
 * takes `what`. */
static void call(gpointer proxy, const char *method, GVariant *args,
                 char *what)
{
    g_dbus_proxy_call(G_DBUS_PROXY(proxy), method, args,
                      G_DBUS_CALL_FLAGS_NONE, -1, NULL, on_done, what);
}

static void on_absolute(GObject *obj, GParamSpec *pspec, gpointer data)
{
    QsInput *input = data;

    (void)obj, (void)pspec;
    g_message("input: the guest mouse is now %s",
              qs_input_is_absolute(input) ? "absolute" : "relative");
    if (input->func) {
        input->func(input, QS_INPUT_CHANGED_ABSOLUTE, input->user_data);
    }
}

static void on_modifiers(GObject *obj, GParamSpec *pspec, gpointer data)
{
    QsInput *input = data;

    (void)obj, (void)pspec;
    if (input->func) {
        input->func(input, QS_INPUT_CHANGED_MODIFIERS, input->user_data);
    }
}

QsInput *qs_input_new(GDBusConnection *conn, const char *dest,
                      const char *console_path, GError **error)
{
    g_autoptr(QsInput) input = g_new0(QsInput, 1);

    input->keyboard = qemu_dbus_display1_keyboard_proxy_new_sync(
        conn, G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START, dest, console_path, NULL,
        error);
    if (!input->keyboard) {
        return NULL;
    }
    input->mouse = qemu_dbus_display1_mouse_proxy_new_sync(
        conn, G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START, dest, console_path, NULL,
        error);
    if (!input->mouse) {
        return NULL;
    }
    g_signal_connect(input->mouse, "notify::is-absolute",
                     G_CALLBACK(on_absolute), input);
    g_signal_connect(input->keyboard, "notify::modifiers",
                     G_CALLBACK(on_modifiers), input);
    return g_steal_pointer(&input);
}

void qs_input_free(QsInput *input)
{
    if (!input) {
        return;
    }
    if (input->mouse) {
        g_signal_handlers_disconnect_by_data(input->mouse, input);
    }
    if (input->keyboard) {
        g_signal_handlers_disconnect_by_data(input->keyboard, input);
    }
    g_clear_object(&input->keyboard);
    g_clear_object(&input->mouse);
    g_free(input);
}

void qs_input_set_changed_func(QsInput *input, QsInputChangedFunc func,
                               gpointer user_data)
{
    input->func = func;
    input->user_data = user_data;
}

void qs_input_key(QsInput *input, uint32_t qnum, gboolean down)
{
    const char *method = down ? "Press" : "Release";

    call(input->keyboard, method, g_variant_new("(u)", qnum),
         g_strdup_printf("Keyboard.%s(0x%x)", method, qnum));
}

void qs_input_button(QsInput *input, uint32_t button, gboolean down)
{
    const char *method = down ? "Press" : "Release";

    if (button >= QS_BUTTON_COUNT) {
        return;
    }
    if (down) {
        input->buttons |= 1u << button;
    } else {
        input->buttons &= ~(1u << button);
    }
    call(input->mouse, method, g_variant_new("(u)", button),
         g_strdup_printf("Mouse.%s(%u)", method, button));
}

void qs_input_wheel(QsInput *input, int steps)
{
    uint32_t button = steps < 0 ? QS_BUTTON_WHEEL_UP : QS_BUTTON_WHEEL_DOWN;

    /* A client asking for thousands of steps gets a bounded burst. */
    for (int i = 0; i < MIN(ABS(steps), 32); i++) {
        qs_input_button(input, button, TRUE);
        qs_input_button(input, button, FALSE);
    }
}

void qs_input_buttons(QsInput *input, uint32_t mask)
{
    uint32_t changed[QS_BUTTON_COUNT];
    gboolean pressed[QS_BUTTON_COUNT];
    unsigned n = qs_input_button_changes(input->buttons, mask, changed,
                                         pressed);

    for (unsigned i = 0; i < n; i++) {
        qs_input_button(input, changed[i], pressed[i]);
    }
}

void qs_input_motion_abs(QsInput *input, int64_t x, int64_t y,
                         uint32_t console_width, uint32_t console_height)
{
    uint32_t cx, cy;

    if (!qs_input_is_absolute(input)) {
        g_debug("input: absolute motion dropped: the guest mouse is relative");
        return;
    }
    if (!qs_input_clamp_abs(x, y, console_width, console_height, &cx, &cy)) {
        return;
    }
    call(input->mouse, "SetAbsPosition", g_variant_new("(uu)", cx, cy),
         g_strdup_printf("Mouse.SetAbsPosition(%u, %u)", cx, cy));
}

void qs_input_motion_rel(QsInput *input, int32_t dx, int32_t dy)
{
    if (qs_input_is_absolute(input)) {
        g_debug("input: relative motion dropped: the guest mouse is absolute");
        return;
    }
    if (dx == 0 && dy == 0) {
        return;
    }
    call(input->mouse, "RelMotion", g_variant_new("(ii)", dx, dy),
         g_strdup_printf("Mouse.RelMotion(%d, %d)", dx, dy));
}

gboolean qs_input_is_absolute(QsInput *input)
{
    return qemu_dbus_display1_mouse_get_is_absolute(input->mouse);
}

uint32_t qs_input_get_modifiers(QsInput *input)
{
    return qemu_dbus_display1_keyboard_get_modifiers(input->keyboard);
}
