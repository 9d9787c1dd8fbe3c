/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of the launcher's systemd side: the unit name of a domain's UUID,
 * and the bounded systemctl call against a stand-in script. */

#include <string.h>
#include <glib/gstdio.h>
#include <gio/gio.h>
#include "qs-launch-systemd.h"

/* The domain's UUID is the instance as it is (in lower case): nothing to
 * escape; anything else is refused by name. */
static void test_unit_name(void)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *u = qs_systemd_unit_name("6F8E1AD4-2b1c-4f3e-9a7d-0c5b1e2f3a4b", &err);
    const char *const bad[] = { "web-1", "6f8e1ad4-2b1c-4f3e-9a7d-0c5b1e2f3a4", "../x",
                                "6f8e1ad4-2b1c-4f3e-9a7d-0c5b1e2f3a4b.service", "" };

    g_assert_no_error(err);
    g_assert_cmpstr(u, ==, "qemu-spice@6f8e1ad4-2b1c-4f3e-9a7d-0c5b1e2f3a4b.service");
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_clear_error(&err);
        g_assert_null(qs_systemd_unit_name(bad[i], &err));
        g_assert_error(err, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
        g_assert_nonnull(strstr(err->message, "is not a domain UUID"));
    }
    g_clear_error(&err);
    g_assert_null(qs_systemd_unit_name(NULL, &err));
}

static void test_booted(void)
{
    g_autofree char *dir = g_dir_make_tmp("qs-sd-XXXXXX", NULL);
    g_autofree char *missing = g_build_filename(dir, "system", NULL);

    g_assert_true(qs_systemd_booted(dir));
    g_assert_false(qs_systemd_booted(missing));
    g_rmdir(dir);
}

/* A stand-in systemctl: writes its arguments to a file, then behaves as
 * the test asks (succeed, fail with a message, or hang). */
static char *fake_systemctl(const char *dir, const char *behaviour)
{
    g_autofree char *script = g_build_filename(dir, "systemctl", NULL);
    g_autofree char *args = g_build_filename(dir, "args", NULL);
    g_autofree char *text = g_strdup_printf(
        "#!/bin/sh\necho \"$@\" > '%s'\n%s\n", args, behaviour);

    g_assert_true(g_file_set_contents(script, text, -1, NULL));
    g_assert_cmpint(g_chmod(script, 0755), ==, 0);
    return g_steal_pointer(&script);
}

static char *read_args(const char *dir)
{
    g_autofree char *path = g_build_filename(dir, "args", NULL);
    char *text = NULL;

    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    return text;
}

static void remove_dir(const char *dir)
{
    const char *names[] = { "systemctl", "args" };

    for (gsize i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *p = g_build_filename(dir, names[i], NULL);

        g_unlink(p);
    }
    g_rmdir(dir);
}

static void test_ctl_ok(void)
{
    g_autofree char *dir = g_dir_make_tmp("qs-sd-XXXXXX", NULL);
    g_autofree char *ctl = fake_systemctl(dir, "exit 0");
    g_autofree char *args = NULL;
    g_autoptr(GError) err = NULL;

    g_assert_true(qs_systemd_ctl(ctl, "start", "qemu-spice@a\\x2db.service",
                                 5000, &err));
    g_assert_no_error(err);
    args = read_args(dir);
    g_assert_cmpstr(args, ==, "start --no-block -- qemu-spice@a\\x2db.service\n");
    remove_dir(dir);
}

static void test_ctl_fails(void)
{
    g_autofree char *dir = g_dir_make_tmp("qs-sd-XXXXXX", NULL);
    g_autofree char *ctl = fake_systemctl(dir,
        "echo 'Failed to start qemu-spice@x.service: Unit qemu-spice@x.service"
        " not found.' >&2\necho second line >&2\nexit 5");
    g_autoptr(GError) err = NULL;

    g_assert_false(qs_systemd_ctl(ctl, "start", "qemu-spice@x.service", 5000,
                                  &err));
    g_assert_error(err, G_IO_ERROR, G_IO_ERROR_FAILED);
    g_assert_nonnull(strstr(err->message, "start qemu-spice@x.service failed: "
                            "Failed to start qemu-spice@x.service: Unit "
                            "qemu-spice@x.service not found."));
    g_assert_null(strstr(err->message, "second line"));
    remove_dir(dir);
}

static void test_ctl_hangs(void)
{
    g_autofree char *dir = g_dir_make_tmp("qs-sd-XXXXXX", NULL);
    g_autofree char *ctl = fake_systemctl(dir, "exec sleep 60");
    g_autoptr(GError) err = NULL;
    gint64 t0 = g_get_monotonic_time();

    g_assert_false(qs_systemd_ctl(ctl, "stop", "qemu-spice@x.service", 300,
                                  &err));
    g_assert_error(err, G_IO_ERROR, G_IO_ERROR_TIMED_OUT);
    /* Correctness, not a figure: the call returned long before sleep's 60 s
     * (so the stand-in was killed and reaped, not waited for). */
    g_assert_cmpint(g_get_monotonic_time() - t0, <, 30 * G_USEC_PER_SEC);
    remove_dir(dir);
}

static void test_ctl_missing(void)
{
    g_autoptr(GError) err = NULL;

    g_assert_false(qs_systemd_ctl("/nonexistent/systemctl", "start",
                                  "qemu-spice@x.service", 1000, &err));
    g_assert_nonnull(err);
    g_assert_nonnull(strstr(err->message, "/nonexistent/systemctl start "
                            "qemu-spice@x.service"));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/launcher/systemd/unit-name", test_unit_name);
    g_test_add_func("/launcher/systemd/booted", test_booted);
    g_test_add_func("/launcher/systemd/ctl-ok", test_ctl_ok);
    g_test_add_func("/launcher/systemd/ctl-fails", test_ctl_fails);
    g_test_add_func("/launcher/systemd/ctl-hangs", test_ctl_hangs);
    g_test_add_func("/launcher/systemd/ctl-missing", test_ctl_missing);
    return g_test_run();
}
