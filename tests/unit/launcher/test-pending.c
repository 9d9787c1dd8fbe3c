/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of the hook's attach record when systemd runs the console: the
 * unit the hook asked for round-trips, and 'status' tells "starting" while
 * the unit's launcher may still come, "not attached" with where to look
 * once it cannot, and the unit's failure with its error. */

#include <string.h>
#include <glib/gstdio.h>
#include <gio/gio.h>
#include "qs-launch-pending.h"

#define UNIT "qemu-spice@web\\x2d1.service"

static QsLaunchConfig *config(char **dir)
{
    g_autofree char *text = NULL;
    QsLaunchConfig *cfg;

    *dir = g_dir_make_tmp("qs-pending-XXXXXX", NULL);
    text = g_strdup_printf("[launcher]\nrun-dir=%s\nwait=60\n", *dir);
    cfg = qs_launch_config_load_data(text, "test.conf", NULL);
    g_assert_nonnull(cfg);
    return cfg;
}

static void cleanup(const QsLaunchConfig *cfg, char *dir)
{
    qs_pending_remove(cfg, "web-1", 0);
    g_rmdir(dir);
    g_free(dir);
}

static QsPending *save_load(const QsLaunchConfig *cfg, gboolean failed,
                            gint64 age_s, const char *error)
{
    QsPending rec = {
        .failed = failed,
        .since = g_get_real_time() / G_USEC_PER_SEC - age_s,
        .error = (char *)error,
        .unit = (char *)UNIT,
    };
    QsPending *p;

    g_assert_true(qs_pending_save(cfg, "web-1", &rec, NULL));
    p = qs_pending_load(cfg, "web-1");
    g_assert_nonnull(p);
    g_assert_cmpstr(p->unit, ==, UNIT);
    g_assert_cmpint(p->pid, ==, 0);
    return p;
}

static void test_queued(void)
{
    char *dir = NULL;
    g_autoptr(QsLaunchConfig) cfg = config(&dir);
    g_autoptr(QsPending) p = save_load(cfg, FALSE, 2, NULL);
    g_autofree char *line = qs_pending_describe(cfg, "web-1", p, FALSE);
    g_autofree char *json = qs_pending_describe(cfg, "web-1", p, TRUE);

    g_assert_cmpint(qs_pending_exit_code(cfg, p), ==, 4);
    g_assert_true(g_str_has_prefix(line, "web-1: starting (the libvirt hook "
                                   "asked systemd to start " UNIT));
    g_assert_nonnull(strstr(json, "\"hook\":\"starting\""));
    g_assert_nonnull(strstr(json, "\"unit\":\"qemu-spice@web\\\\x2d1.service\""));
    cleanup(cfg, dir);
}

static void test_never_came(void)
{
    char *dir = NULL;
    g_autoptr(QsLaunchConfig) cfg = config(&dir);
    /* past [launcher] wait (60 s) and the unit's grace (30 s) */
    g_autoptr(QsPending) p = save_load(cfg, FALSE, 91, NULL);
    g_autofree char *line = qs_pending_describe(cfg, "web-1", p, FALSE);

    g_assert_cmpint(qs_pending_exit_code(cfg, p), ==, 1);
    g_assert_true(g_str_has_prefix(line, "web-1: not attached: " UNIT
                                   " did not attach (see systemctl status "
                                   UNIT ", journalctl -u " UNIT));
    cleanup(cfg, dir);
}

static void test_failed(void)
{
    char *dir = NULL;
    g_autoptr(QsLaunchConfig) cfg = config(&dir);
    g_autoptr(QsPending) p = save_load(cfg, TRUE, 0,
                                       "no console: systemctl start failed");
    g_autofree char *line = qs_pending_describe(cfg, "web-1", p, FALSE);

    g_assert_cmpint(qs_pending_exit_code(cfg, p), ==, 1);
    /* "failed N s ago": N is 0, or 1 when a second ticked over meanwhile. */
    g_assert_true(g_str_has_prefix(line, "web-1: not attached: " UNIT " failed "));
    g_assert_nonnull(strstr(line, " s ago: no console: systemctl start failed "
                            "(systemctl status " UNIT "; journalctl -u "
                            UNIT ")"));
    cleanup(cfg, dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/launcher/pending/unit-queued", test_queued);
    g_test_add_func("/launcher/pending/unit-never-came", test_never_came);
    g_test_add_func("/launcher/pending/unit-failed", test_failed);
    return g_test_run();
}
