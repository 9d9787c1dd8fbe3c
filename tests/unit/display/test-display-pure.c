/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of helper/display's pure parts: QMP parsing, watchdog, input, chardev names. */

#include <string.h>

#include "display/qs-chardev-names.h"
#include "display/qs-cursor.h"
#include "display/qs-input-map.h"
#include "display/qs-qmp.h"
#include "display/qs-watchdog.h"

static gboolean parse(const char *text, QsQmpMessage *msg)
{
    g_autoptr(GError) error = NULL;
    gboolean ok = qs_qmp_parse(text, strlen(text), msg, &error);

    g_assert_true(ok == (error == NULL));
    return ok;
}

static void test_qmp_kinds(void)
{
    QsQmpMessage m;

    g_assert_true(parse("{\"QMP\": {\"version\": {\"qemu\": {\"micro\": 22, "
                        "\"minor\": 2, \"major\": 7}, \"package\": \"x\"}, "
                        "\"capabilities\": [\"oob\"]}}", &m));
    g_assert_cmpint(m.kind, ==, QS_QMP_GREETING);
    qs_qmp_message_clear(&m);

    g_assert_true(parse("{\"return\": {}}\r", &m));
    g_assert_cmpint(m.kind, ==, QS_QMP_RETURN);
    qs_qmp_message_clear(&m);

    g_assert_true(parse("{\"return\": [1, -2.5e3, true, null, \"s\"], "
                        "\"id\": 7}", &m));
    g_assert_cmpint(m.kind, ==, QS_QMP_RETURN);
    qs_qmp_message_clear(&m);

    g_assert_true(parse("{\"timestamp\": {\"seconds\": 1, \"microseconds\": 2},"
                        " \"event\": \"STOP\"}", &m));
    g_assert_cmpint(m.kind, ==, QS_QMP_EVENT);
    g_assert_cmpstr(m.event, ==, "STOP");
    qs_qmp_message_clear(&m);
}

static void test_qmp_error(void)
{
    QsQmpMessage m;

    g_assert_true(parse("{\"error\": {\"class\": \"GenericError\", \"desc\": "
                        "\"p2p connections not accepted in bus mode\"}}", &m));
    g_assert_cmpint(m.kind, ==, QS_QMP_ERROR);
    g_assert_cmpstr(m.error_class, ==, "GenericError");
    g_assert_cmpstr(m.error_desc, ==,
                    "p2p connections not accepted in bus mode");
    qs_qmp_message_clear(&m);

    /* Escapes are decoded; non-ASCII \u becomes '?'. */
    g_assert_true(parse("{\"error\": {\"desc\": \"a\\\"b\\\\c\\n\\u0041\\u00e9\", "
                        "\"extra\": [1, {\"x\": 2}]}}", &m));
    g_assert_cmpstr(m.error_desc, ==, "a\"b\\c\nA?");
    g_assert_null(m.error_class);
    qs_qmp_message_clear(&m);
}

static void test_qmp_malformed(void)
{
    static const char *const bad[] = {
        "", "{", "}", "[]", "{\"return\"}", "{\"return\": }",
        "{\"return\": {}} x", "{\"return\": {}, }", "{\"a\": 1}",
        "{\"return\": {}, \"error\": {}}", "{\"error\": 5}",
        "{\"event\": 5}", "{\"return\": \"\\x\"}", "{\"return\": \"\\u12\"}",
        "{\"return\": tru}", "{\"return\": -}", "{\"return\": \"a\nb\"}",
        "{'return': {}}",
    };
    g_autoptr(GString) deep = g_string_new("{\"return\": ");

    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        QsQmpMessage m;

        if (parse(bad[i], &m)) {
            g_error("accepted malformed QMP text '%s'", bad[i]);
        }
        g_assert_null(m.error_desc);
        g_assert_null(m.event);
    }
    for (int i = 0; i < 100; i++) {
        g_string_append_c(deep, '[');
    }
    for (int i = 0; i < 100; i++) {
        g_string_append_c(deep, ']');
    }
    g_string_append_c(deep, '}');
    {
        QsQmpMessage m;

        g_assert_false(parse(deep->str, &m));
    }
}

static void test_watchdog_idle(void)
{
    QsWatchdog wd;

    qs_watchdog_init(&wd, 300000, 1000);
    /* Nothing waits: never late, however long the silence. */
    for (int64_t t = 0; t < 10 * G_USEC_PER_SEC; t += 100000) {
        g_assert_cmpint(qs_watchdog_check(&wd, t, 5, 0, 0, FALSE), ==, QS_WATCHDOG_OK);
    }
}

static void test_watchdog_stalled(void)
{
    QsWatchdog wd;

    qs_watchdog_init(&wd, 300000, 1 << 20);
    g_assert_cmpint(qs_watchdog_check(&wd, 0, 10, 0, 0, FALSE), ==, QS_WATCHDOG_OK);
    /* Idle for 5 s, then a message arrives: time counts from its arrival. */
    g_assert_cmpint(qs_watchdog_check(&wd, 5000000, 10, 100, 0, FALSE), ==,
                    QS_WATCHDOG_OK);
    g_assert_cmpint(qs_watchdog_check(&wd, 5200000, 10, 200, 0, FALSE), ==,
                    QS_WATCHDOG_OK);
    g_assert_cmpint(qs_watchdog_check(&wd, 5299999, 10, 200, 0, FALSE), ==,
                    QS_WATCHDOG_OK);
    g_assert_cmpint(qs_watchdog_check(&wd, 5300000, 10, 200, 0, FALSE), ==,
                    QS_WATCHDOG_STALLED);
}

static void test_watchdog_progress(void)
{
    QsWatchdog wd;

    qs_watchdog_init(&wd, 300000, 1 << 20);
    /* Always something waiting, but the listener keeps handling: fine. */
    for (int i = 0; i < 100; i++) {
        g_assert_cmpint(qs_watchdog_check(&wd, i * 100000, (uint64_t)i, 500, 0, FALSE),
                        ==, QS_WATCHDOG_OK);
    }
    /* Progress stops: late after stall_us from the last progress seen. */
    g_assert_cmpint(qs_watchdog_check(&wd, 10000000, 99, 500, 0, FALSE), ==,
                    QS_WATCHDOG_OK);
    g_assert_cmpint(qs_watchdog_check(&wd, 10200000, 99, 500, 0, FALSE), ==,
                    QS_WATCHDOG_STALLED);
    /* The backlog drains: back to normal. */
    g_assert_cmpint(qs_watchdog_check(&wd, 10300000, 99, 0, 0, FALSE), ==,
                    QS_WATCHDOG_OK);
    g_assert_cmpint(qs_watchdog_check(&wd, 10400000, 99, 10, 0, FALSE), ==,
                    QS_WATCHDOG_OK);
}

static void test_watchdog_backlog(void)
{
    QsWatchdog wd;

    qs_watchdog_init(&wd, 300000, 1000);
    g_assert_cmpint(qs_watchdog_check(&wd, 0, 1, 1000, 0, FALSE), ==, QS_WATCHDOG_OK);
    g_assert_cmpint(qs_watchdog_check(&wd, 1, 2, 1001, 0, FALSE), ==,
                    QS_WATCHDOG_BACKLOG);
    g_assert_cmpstr(qs_watchdog_verdict_str(QS_WATCHDOG_BACKLOG), ==,
                    "backlog too large");
}

static void test_watchdog_behind(void)
{
    QsWatchdog wd;
    int64_t t;

    qs_watchdog_init(&wd, 300000, 1 << 30);
    /* The listener keeps up with what it has read, but the socket is never
     * empty: qemu is ahead of us, and its queue grows. */
    for (t = 0; t < QS_WATCHDOG_BEHIND_US; t += 100000) {
        g_assert_cmpint(qs_watchdog_check(&wd, t, (uint64_t)t, 0, 4096, FALSE), ==,
                        QS_WATCHDOG_OK);
    }
    g_assert_cmpint(qs_watchdog_check(&wd, t, (uint64_t)t, 0, 4096, FALSE), ==,
                    QS_WATCHDOG_BEHIND);
    /* One check finding it empty starts the count again. */
    qs_watchdog_init(&wd, 300000, 1 << 30);
    for (t = 0; t < 3 * QS_WATCHDOG_BEHIND_US; t += 100000) {
        uint64_t unread = (t / 100000) % 9 == 8 ? 0 : 4096;

        g_assert_cmpint(qs_watchdog_check(&wd, t, (uint64_t)t, 0, unread, FALSE), ==,
                        QS_WATCHDOG_OK);
    }
    /* Bytes at every check, but the reader found the socket empty after a
     * message now and then: it keeps up, however busy. */
    qs_watchdog_init(&wd, 300000, 1 << 30);
    for (t = 0; t < 5 * QS_WATCHDOG_BEHIND_US; t += 100000) {
        gboolean emptied = (t / 100000) % 9 == 8;

        g_assert_cmpint(qs_watchdog_check(&wd, t, (uint64_t)t, 0, 4096, emptied), ==,
                        QS_WATCHDOG_OK);
    }
    /* The count runs from the last time it was: a full second later the
     * reader is behind. */
    qs_watchdog_init(&wd, 300000, 1 << 30);
    g_assert_cmpint(qs_watchdog_check(&wd, 0, 1, 0, 4096, FALSE), ==, QS_WATCHDOG_OK);
    g_assert_cmpint(qs_watchdog_check(&wd, 500000, 2, 0, 4096, TRUE), ==, QS_WATCHDOG_OK);
    g_assert_cmpint(qs_watchdog_check(&wd, 1400000, 3, 0, 4096, FALSE), ==, QS_WATCHDOG_OK);
    g_assert_cmpint(qs_watchdog_check(&wd, 1500000, 4, 0, 4096, FALSE), ==,
                    QS_WATCHDOG_BEHIND);
}

static void test_input_scancode(void)
{
    static const struct {
        uint32_t code;
        gboolean ok;
        uint32_t qnum;
        gboolean release;
    } cases[] = {
        { 0x1e, TRUE, 0x1e, FALSE },        /* A */
        { 0x9e, TRUE, 0x1e, TRUE },
        { 0x48e0, TRUE, 0xc8, FALSE },      /* up arrow */
        { 0xc8e0, TRUE, 0xc8, TRUE },
        { 0x1de0, TRUE, 0x9d, FALSE },      /* right ctrl */
        { 0x451de1, TRUE, QS_QNUM_PAUSE, FALSE },
        { 0x2ae0, FALSE, 0, FALSE },        /* fake shift */
        { 0x00e0, FALSE, 0, FALSE },
        { 0x00, FALSE, 0, FALSE },
        { 0x80, FALSE, 0, FALSE },
        { 0x1e1e, FALSE, 0, FALSE },
        { 0x1148e0, FALSE, 0, FALSE },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        uint32_t qnum = 0;
        gboolean release = FALSE;
        gboolean ok = qs_input_scancode_to_qnum(cases[i].code, &qnum, &release);

        g_assert_cmpint(ok, ==, cases[i].ok);
        if (ok) {
            g_assert_cmphex(qnum, ==, cases[i].qnum);
            g_assert_cmpint(release, ==, cases[i].release);
        }
    }
}

static void test_input_buttons(void)
{
    uint32_t changed[QS_BUTTON_COUNT];
    gboolean pressed[QS_BUTTON_COUNT];
    uint32_t b;
    unsigned n;

    g_assert_true(qs_input_spice_button(1, &b));
    g_assert_cmpuint(b, ==, QS_BUTTON_LEFT);
    g_assert_true(qs_input_spice_button(5, &b));
    g_assert_cmpuint(b, ==, QS_BUTTON_WHEEL_DOWN);
    g_assert_true(qs_input_spice_button(7, &b));
    g_assert_cmpuint(b, ==, QS_BUTTON_EXTRA);
    g_assert_false(qs_input_spice_button(0, &b));
    g_assert_false(qs_input_spice_button(8, &b));

    /* left held -> right held: release left first, then press right */
    n = qs_input_button_changes(1u << 0, 1u << 2, changed, pressed);
    g_assert_cmpuint(n, ==, 2);
    g_assert_cmpuint(changed[0], ==, QS_BUTTON_LEFT);
    g_assert_false(pressed[0]);
    g_assert_cmpuint(changed[1], ==, QS_BUTTON_RIGHT);
    g_assert_true(pressed[1]);
    /* unknown high bits are ignored */
    n = qs_input_button_changes(0, 0xffffff80u, changed, pressed);
    g_assert_cmpuint(n, ==, 0);
    n = qs_input_button_changes(0, 0x7f, changed, pressed);
    g_assert_cmpuint(n, ==, QS_BUTTON_COUNT);
}

static void test_input_clamp(void)
{
    uint32_t x, y;

    g_assert_false(qs_input_clamp_abs(5, 5, 0, 480, &x, &y));
    g_assert_true(qs_input_clamp_abs(-5, 1000, 640, 480, &x, &y));
    g_assert_cmpuint(x, ==, 0);
    g_assert_cmpuint(y, ==, 479);
    g_assert_true(qs_input_clamp_abs(640, 12, 640, 480, &x, &y));
    g_assert_cmpuint(x, ==, 639);
    g_assert_cmpuint(y, ==, 12);
}

static void test_cursor(void)
{
    g_autoptr(QsCursor) cursor = qs_cursor_new();
    g_autoptr(GError) error = NULL;
    uint8_t pixels[4 * 4 * 4] = { 1, 2, 3, 4 };
    QsCursorShape shape;
    QsCursorPosition pos;

    g_assert_false(qs_cursor_define(cursor, 4, 4, 0, 0, pixels, 10, &error));
    g_clear_error(&error);
    g_assert_false(qs_cursor_define(cursor, 0, 4, 0, 0, pixels, 0, &error));
    g_clear_error(&error);
    g_assert_false(qs_cursor_define(cursor, 100000, 100000, 0, 0, pixels,
                                    sizeof(pixels), &error));
    g_clear_error(&error);
    g_assert_true(qs_cursor_define(cursor, 4, 4, 9, -1, pixels,
                                   sizeof(pixels), &error));
    qs_cursor_get_shape(cursor, &shape);
    g_assert_cmpint(shape.hot_x, ==, 3);
    g_assert_cmpint(shape.hot_y, ==, 0);
    g_assert_cmpuint(shape.serial, ==, 1);
    g_assert_cmpuint(g_bytes_get_size(shape.pixels), ==, sizeof(pixels));
    g_bytes_unref(shape.pixels);

    qs_cursor_set_position(cursor, 10, 20, TRUE);
    qs_cursor_get_position(cursor, &pos);
    g_assert_cmpint(pos.x, ==, 10);
    g_assert_true(pos.visible);
    g_assert_cmpuint(pos.serial, ==, 1);
}

/* Which names become which channel; the rest is left alone with why. */
static void test_chardev_roles(void)
{
    static const struct {
        const char *name;
        QsChardevRole role;
    } cases[] = {
        { "com.redhat.spice.0", QS_CHARDEV_ROLE_AGENT },
        { "org.qemu.usbredir", QS_CHARDEV_ROLE_USBREDIR },
        { "org.spice-space.smartcard", QS_CHARDEV_ROLE_SMARTCARD },
        { "org.spice-space.webdav.0", QS_CHARDEV_ROLE_PORT },
        { "org.spice-space.stream.0", QS_CHARDEV_ROLE_PORT },
        { "org.qemu.console.serial.0", QS_CHARDEV_ROLE_PORT },
        { "org.qemu.monitor.qmp.0", QS_CHARDEV_ROLE_NONE },
        { "org.qemu.monitor.hmp.0", QS_CHARDEV_ROLE_NONE },
        { "org.qemu.guest_agent.0", QS_CHARDEV_ROLE_NONE },
        { "com.redhat.spice.1", QS_CHARDEV_ROLE_NONE },
        { "org.qemu.usbredir.1", QS_CHARDEV_ROLE_NONE },
        { "", QS_CHARDEV_ROLE_NONE },
        { "org.spice-space.", QS_CHARDEV_ROLE_PORT },
        { "org.spice-space.a b", QS_CHARDEV_ROLE_NONE },
        { "org.spice-space.\xc3\xa9", QS_CHARDEV_ROLE_NONE },
    };
    g_autofree char *longest = g_strnfill(127 - strlen("org.spice-space."), 'x');
    g_autofree char *ok = g_strconcat("org.spice-space.", longest, NULL);
    g_autofree char *too_long = g_strconcat(ok, "x", NULL);
    const char *why;

    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        QsChardevRole role = qs_chardev_role_of(cases[i].name, &why);

        g_assert_cmpint(role, ==, cases[i].role);
        g_assert_true((role == QS_CHARDEV_ROLE_NONE) == (why != NULL));
    }
    g_assert_cmpint(qs_chardev_role_of(ok, NULL), ==, QS_CHARDEV_ROLE_PORT);
    g_assert_cmpint(qs_chardev_role_of(too_long, &why), ==, QS_CHARDEV_ROLE_NONE);
    g_assert_nonnull(strstr(why, "127"));
    g_assert_cmpint(qs_chardev_role_of("org.qemu.monitor.hmp.0", &why), ==,
                    QS_CHARDEV_ROLE_NONE);
    g_assert_nonnull(strstr(why, "org.spice-space.*"));
}

/* Chardev ids in order, numbers by value (libvirt's charredir0 ... 10). */
static void test_chardev_order(void)
{
    static const char *const sorted[] = {
        "/org/qemu/Display1/Chardev_charredir0",
        "/org/qemu/Display1/Chardev_charredir1",
        "/org/qemu/Display1/Chardev_charredir01",
        "/org/qemu/Display1/Chardev_charredir2",
        "/org/qemu/Display1/Chardev_charredir10",
        "/org/qemu/Display1/Chardev_charredir10a",
        "/org/qemu/Display1/Chardev_charredirx",
        "/org/qemu/Display1/Chardev_usb",
    };

    for (guint i = 0; i < G_N_ELEMENTS(sorted); i++) {
        g_assert_cmpint(qs_chardev_path_compare(sorted[i], sorted[i]), ==, 0);
        for (guint j = i + 1; j < G_N_ELEMENTS(sorted); j++) {
            g_assert_cmpint(qs_chardev_path_compare(sorted[i], sorted[j]), <, 0);
            g_assert_cmpint(qs_chardev_path_compare(sorted[j], sorted[i]), >, 0);
        }
    }
    g_assert_cmpint(qs_chardev_path_compare("a", "a0"), <, 0);
    g_assert_cmpint(qs_chardev_path_compare("a9", "a10"), <, 0);
    g_assert_cmpint(qs_chardev_path_compare("a000", "a0"), >, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/display/qmp/kinds", test_qmp_kinds);
    g_test_add_func("/display/qmp/error", test_qmp_error);
    g_test_add_func("/display/qmp/malformed", test_qmp_malformed);
    g_test_add_func("/display/watchdog/idle", test_watchdog_idle);
    g_test_add_func("/display/watchdog/stalled", test_watchdog_stalled);
    g_test_add_func("/display/watchdog/progress", test_watchdog_progress);
    g_test_add_func("/display/watchdog/backlog", test_watchdog_backlog);
    g_test_add_func("/display/watchdog/behind", test_watchdog_behind);
    g_test_add_func("/display/input/scancode", test_input_scancode);
    g_test_add_func("/display/input/buttons", test_input_buttons);
    g_test_add_func("/display/input/clamp", test_input_clamp);
    g_test_add_func("/display/cursor/define", test_cursor);
    g_test_add_func("/display/chardev/roles", test_chardev_roles);
    g_test_add_func("/display/chardev/order", test_chardev_order);
    return g_test_run();
}
