/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of the state file: round trip, escaping, malformed input. */

#include <string.h>
#include <glib/gstdio.h>
#include <gio/gio.h>
#include "qs-launch-state.h"

static QsLaunchState *sample(void)
{
    QsLaunchState *st = g_new0(QsLaunchState, 1);

    st->domain = g_strdup("vm \"one\"\\\n\t\x01");
    st->uuid = g_strdup("0b4d1f3e-7a2c-4c57-9b1e-1d2a3b4c5d6e");
    st->mode = g_strdup("p2p");
    st->monitor_pid = 100;
    st->helper_pid = 101;
    st->host = g_strdup("hv1");
    st->listen = g_strdup("0.0.0.0");
    st->port = 5900;
    st->tls_port = 0;
    st->ticket_file = g_strdup("/run/qemu-spice/vm.ticket");
    st->ticket_expiry = 1800000000;
    st->started = 1700000000;
    st->attached = 1699999999;
    st->restarts = 3;
    st->supervise = TRUE;
    st->log = g_strdup("/var/log/qemu-spice/vm.log");
    st->tls_dir = NULL;
    return st;
}

static void assert_same(const QsLaunchState *a, const QsLaunchState *b)
{
    g_assert_cmpstr(a->domain, ==, b->domain);
    g_assert_cmpstr(a->uuid, ==, b->uuid);
    g_assert_cmpstr(a->mode, ==, b->mode);
    g_assert_cmpint(a->monitor_pid, ==, b->monitor_pid);
    g_assert_cmpint(a->helper_pid, ==, b->helper_pid);
    g_assert_cmpstr(a->host, ==, b->host);
    g_assert_cmpstr(a->listen, ==, b->listen);
    g_assert_cmpuint(a->port, ==, b->port);
    g_assert_cmpuint(a->tls_port, ==, b->tls_port);
    g_assert_cmpstr(a->ticket_file, ==, b->ticket_file);
    g_assert_cmpint(a->ticket_expiry, ==, b->ticket_expiry);
    g_assert_cmpint(a->started, ==, b->started);
    g_assert_cmpint(a->attached, ==, b->attached);
    g_assert_cmpuint(a->restarts, ==, b->restarts);
    g_assert_cmpint(a->supervise, ==, b->supervise);
    g_assert_cmpstr(a->log, ==, b->log);
    g_assert_cmpstr(a->tls_dir, ==, b->tls_dir);
}

static void test_round_trip(void)
{
    g_autoptr(QsLaunchState) st = sample();
    g_autoptr(GError) err = NULL;
    g_autofree char *dir = g_dir_make_tmp("qs-state-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "vm.json", NULL);
    g_autoptr(QsLaunchState) back = NULL;
    GStatBuf sb;

    g_assert_true(qs_launch_state_save(st, path, &err));
    g_assert_no_error(err);
    g_assert_cmpint(g_stat(path, &sb), ==, 0);
    g_assert_cmpint(sb.st_mode & 0777, ==, 0644);
    back = qs_launch_state_load(path, &err);
    g_assert_no_error(err);
    assert_same(st, back);
    g_remove(path);
    g_rmdir(dir);
}

static void test_json_shape(void)
{
    g_autoptr(QsLaunchState) st = sample();
    g_autofree char *j = qs_launch_state_to_json(st);

    g_assert_true(g_str_has_prefix(j, "{\"domain\":\"vm \\\"one\\\"\\\\\\n\\t\\u0001\""));
    g_assert_nonnull(strstr(j, "\"port\":5900,\"tls_port\":0,"));
    g_assert_nonnull(strstr(j, "\"supervise\":true"));
    g_assert_nonnull(strstr(j, "\"tls_dir\":null}"));
}

static void test_malformed(void)
{
    const char *cases[] = {
        "", "[]", "{", "{\"domain\":\"x\"", "{\"domain\":x}",
        "{\"nope\":1,\"domain\":\"x\"}", "{\"port\":-1,\"domain\":\"x\"}",
        "{\"port\":99999999999,\"domain\":\"x\"}", "{\"port\":5900}",
        "{\"domain\":\"x\"} trailing", "{\"supervise\":yes,\"domain\":\"x\"}",
        "{\"port\":null,\"domain\":\"x\"}", "{\"domain\":\"x\" \"port\":1}",
        "{\"port\":1.5,\"domain\":\"x\"}", "{\"domain\":\"\xff\"}",
        "{\"domain\":null}", "{\"domain\":\"x\",\"supervise\":1}",
        "{\"domain\":[\"x\"]}", "{\"domain\":\"v\\u00e\xc7\x88\"}",
    };

    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) err = NULL;
        g_autoptr(QsLaunchState) st = qs_launch_state_from_json(cases[i], &err);

        if (st || !err) {
            g_error("case %u '%s' was accepted", i, cases[i]);
        }
    }
}

static void test_whitespace(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(QsLaunchState) st = qs_launch_state_from_json(
        " { \"domain\" : \"x\" , \"port\" : 5901 , \"uuid\" : null }\n", &err);

    g_assert_no_error(err);
    g_assert_cmpstr(st->domain, ==, "x");
    g_assert_cmpuint(st->port, ==, 5901);
    g_assert_null(st->uuid);
}

/* Any JSON string escape reads back, and what is written reads back the same. */
static void test_unicode(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(QsLaunchState) st = qs_launch_state_from_json(
        "{\"domain\":\"caf\\u00e9\",\"log\":\"a\\/b\\u0001\"}", &err);
    g_autofree char *out = NULL;
    g_autoptr(QsLaunchState) again = NULL;

    g_assert_no_error(err);
    g_assert_cmpstr(st->domain, ==, "caf\xc3\xa9");
    g_assert_cmpstr(st->log, ==, "a/b\x01");
    out = qs_launch_state_to_json(st);
    again = qs_launch_state_from_json(out, &err);
    g_assert_no_error(err);
    g_assert_cmpstr(again->domain, ==, st->domain);
    g_assert_cmpstr(again->log, ==, st->log);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/launcher/state/round-trip", test_round_trip);
    g_test_add_func("/launcher/state/json-shape", test_json_shape);
    g_test_add_func("/launcher/state/malformed", test_malformed);
    g_test_add_func("/launcher/state/whitespace", test_whitespace);
    g_test_add_func("/launcher/state/unicode", test_unicode);
    return g_test_run();
}
