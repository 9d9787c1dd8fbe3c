/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of qemu-spice.conf parsing: defaults, every key, every bad value;
 * what libvirt's qemu.conf gives when it does not say. */

#include <pwd.h>
#include <glib.h>
#include <glib/gstdio.h>
#include "qs-launch-config.h"
#include "qs-launch-qemu-conf.h"

/* No qemu.conf: the defaults are libvirt's own. */
#define NO_QEMU_CONF "[launcher]\nqemu-conf=/nonexistent/qemu.conf\n"

static void test_defaults(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(QsLaunchConfig) c = qs_launch_config_load_data(NO_QEMU_CONF, "t.conf", &err);

    g_assert_no_error(err);
    g_assert_cmpstr(c->uri, ==, "qemu:///system");
    g_assert_cmpstr(c->qemu_conf, ==, "/nonexistent/qemu.conf");
    g_assert_cmpstr(c->run_dir, ==, "/run/qemu-spice");
    g_assert_cmpstr(c->log_dir, ==, "/var/log/qemu-spice");
    g_assert_cmpuint(c->max_sessions, ==, 4);
    g_assert_cmpstr(c->when_full, ==, "refuse");
    g_assert_cmpuint(c->max_fps, ==, 30);
    g_assert_true(c->console_page);
    /* libvirt's SPICE default (qemu.conf spice_listen unset) */
    g_assert_cmpstr(c->listen_address, ==, "127.0.0.1");
    g_assert_null(c->public_address);
    /* clear of libvirt's default autoport (5900-65535) and websocket
     * (5700-65535) ranges */
    g_assert_cmpuint(c->port_min, ==, 5500);
    g_assert_cmpuint(c->port_max, ==, 5599);
    g_assert_cmpuint(c->port_max, <, 5700);
    g_assert_true(c->plain);
    g_assert_false(c->tls);
    g_assert_cmpuint(c->ticket_lifetime_s, ==, 0);
    g_assert_cmpstr(c->helper_user, ==,
                    getpwnam("qemu-spice") ? "qemu-spice" : "nobody");
    g_assert_cmpint(c->autostart, ==, QS_AUTOSTART_METADATA);
    g_assert_true(c->supervise);
    /* TLS: libvirt's SPICE certificate directory unless configured */
    g_assert_false(c->tls_dir_set);
    g_assert_cmpstr(qs_libvirt_spice_tls_dirs[0], ==, "/etc/pki/libvirt-spice");
    g_assert_cmpstr(qs_libvirt_spice_tls_dirs[1], ==, "/etc/pki/qemu");
    g_assert_null(qs_libvirt_spice_tls_dirs[2]);
    if (g_file_test("/etc/pki/libvirt-spice", G_FILE_TEST_IS_DIR) ||
        !g_file_test("/etc/pki/qemu", G_FILE_TEST_IS_DIR)) {
        g_assert_cmpstr(c->tls_dir, ==, "/etc/pki/libvirt-spice");
    } else {
        g_assert_cmpstr(c->tls_dir, ==, "/etc/pki/qemu");
    }
}

/* libvirt's order: the SPICE directory if it exists, else the general one,
 * and with neither the SPICE one (whose absence the attach then names). */
static void test_default_tls_dir(void)
{
    g_autofree char *dir = g_dir_make_tmp("qs-tls-XXXXXX", NULL);
    g_autofree char *spice = g_build_filename(dir, "libvirt-spice", NULL);
    g_autofree char *qemu = g_build_filename(dir, "qemu", NULL);
    const char *const candidates[] = { spice, qemu, NULL };
    g_autofree char *none = qs_launch_config_default_tls_dir(candidates);
    g_autofree char *second = NULL;
    g_autofree char *first = NULL;

    g_assert_cmpstr(none, ==, spice);
    g_assert_cmpint(g_mkdir(qemu, 0700), ==, 0);
    second = qs_launch_config_default_tls_dir(candidates);
    g_assert_cmpstr(second, ==, qemu);
    g_assert_cmpint(g_mkdir(spice, 0700), ==, 0);
    first = qs_launch_config_default_tls_dir(candidates);
    g_assert_cmpstr(first, ==, spice);
    g_rmdir(spice);
    g_rmdir(qemu);
    g_rmdir(dir);
}

/* The first user that exists; the first when none does (then the config
 * load names it as missing). */
static void test_default_user(void)
{
    static const char *const some[] = { "no-such-user-qs", "root", NULL };
    static const char *const none[] = { "no-such-user-qs", "no-such-user-qs2",
                                        NULL };
    g_autofree char *found = qs_launch_config_default_user(some);
    g_autofree char *first = qs_launch_config_default_user(none);

    g_assert_cmpstr(found, ==, "root");
    g_assert_cmpstr(first, ==, "no-such-user-qs");
    g_assert_cmpstr(qs_helper_users[0], ==, "qemu-spice");
    g_assert_cmpstr(qs_helper_users[1], ==, "nobody");
    g_assert_null(qs_helper_users[2]);
}

static void test_all_keys(void)
{
    const char *data =
        "[launcher]\nuri=qemu:///session\nrun-dir=/tmp/r\nautostart=list\n"
        "autostart-domains=a;b\nsupervise=false\nrestart-backoff-max=7\n"
        "wait=9\n"
        "[listen]\naddress=::1\nports=6000-6010\nplain=no\ntls=yes\n"
        "tls-dir=/etc/x\nsecure-channels=main,display\nhost=hv.example\n"
        "[ticket]\nlifetime=300\n"
        "[helper]\npath=/opt/qs\nuser=root\nlog-dir=/tmp/l\nmax-fps=12\nconsole-page=false\n"
        "[sessions]\nmax=2\nwhen-full=replace\n";
    g_autoptr(GError) err = NULL;
    g_autoptr(QsLaunchConfig) c = qs_launch_config_load_data(data, "t.conf", &err);

    g_assert_no_error(err);
    g_assert_cmpstr(c->uri, ==, "qemu:///session");
    g_assert_cmpstr(c->run_dir, ==, "/tmp/r");
    g_assert_cmpint(c->autostart, ==, QS_AUTOSTART_LIST);
    g_assert_cmpuint(g_strv_length(c->autostart_domains), ==, 2);
    g_assert_false(c->supervise);
    g_assert_cmpuint(c->backoff_max_s, ==, 7);
    g_assert_cmpuint(c->wait_s, ==, 9);
    g_assert_cmpstr(c->listen_address, ==, "::1");
    g_assert_cmpuint(c->port_min, ==, 6000);
    g_assert_cmpuint(c->port_max, ==, 6010);
    g_assert_false(c->plain);
    g_assert_true(c->tls);
    g_assert_cmpstr(c->tls_dir, ==, "/etc/x");
    g_assert_true(c->tls_dir_set);
    g_assert_cmpstr(c->secure_channels, ==, "main,display");
    g_assert_cmpstr(c->console_host, ==, "hv.example");
    g_assert_cmpuint(c->ticket_lifetime_s, ==, 300);
    g_assert_cmpstr(c->helper_path, ==, "/opt/qs");
    g_assert_cmpuint(c->helper_uid, ==, 0);
    g_assert_cmpstr(c->log_dir, ==, "/tmp/l");
    g_assert_cmpuint(c->max_fps, ==, 12);
    g_assert_false(c->console_page);
    g_assert_cmpuint(c->max_sessions, ==, 2);
    g_assert_cmpstr(c->when_full, ==, "replace");
    g_assert_true(qs_launch_config_wants_autostart(c, "a", FALSE));
    g_assert_false(qs_launch_config_wants_autostart(c, "c", FALSE));
    g_assert_true(qs_launch_config_wants_autostart(c, "c", TRUE));
}

static void test_single_port(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(QsLaunchConfig) c =
        qs_launch_config_load_data("[listen]\nports=5930\n", "t.conf", &err);

    g_assert_no_error(err);
    g_assert_cmpuint(c->port_min, ==, 5930);
    g_assert_cmpuint(c->port_max, ==, 5930);
}

/* Each bad value must fail with a message naming the file and the key. */
static const struct {
    const char *data;
    const char *expect;
} bad[] = {
    { "[listen]\nports=abc\n", "bad.conf: [listen] ports:" },
    { "[listen]\nports=6000-5900\n", "[listen] ports: '6000-5900': the last" },
    { "[listen]\nports=0-10\n", "[listen] ports:" },
    { "[listen]\nports=5900-70000\n", "[listen] ports:" },
    { "[listen]\nports=1-2-3\n", "[listen] ports:" },
    { "[listen]\nports=\n", "[listen] ports:" },
    { "[listen]\naddress=localhost\n", "[listen] address: 'localhost'" },
    { "[listen]\naddress=\n", "[listen] address:" },
    { "[listen]\nplain=maybe\n", "[listen] plain: 'maybe' is not a boolean" },
    { "[listen]\ntls=1\n", "[listen] tls:" },
    { "[listen]\ntls-dir=relative/dir\n", "[listen] tls-dir: 'relative/dir' is not an absolute" },
    { "[listen]\nplain=false\ntls=false\n", "[listen] plain: both" },
    { "[listen]\ntls=false\nsecure-channels=all\n", "[listen] secure-channels: needs tls" },
    { "[listen]\npublic-address=hv1.example\n", "[listen] public-address: 'hv1.example'" },
    { "[launcher]\nqemu-conf=qemu.conf\n", "[launcher] qemu-conf:" },
    { "[listen]\ntls=true\nsecure-channels=Main;x\n", "[listen] secure-channels:" },
    { "[listen]\nhost=a b\n", "[listen] host:" },
    { "[listen]\nfoo=1\n", "bad.conf: [listen] foo: unknown key" },
    { "[nonsense]\na=1\n", "bad.conf: unknown group [nonsense]" },
    { "[ticket]\nlifetime=-5\n", "[ticket] lifetime:" },
    { "[ticket]\nlifetime=1h\n", "[ticket] lifetime:" },
    { "[helper]\npath=qemu-spice\n", "[helper] path:" },
    { "[helper]\nuser=no-such-user-qs\n", "[helper] user: no such user" },
    { "[helper]\nuser=\n", "[helper] user: empty" },
    { "[helper]\nlog-dir=log\n", "[helper] log-dir:" },
    { "[launcher]\nautostart=sometimes\n", "[launcher] autostart: 'sometimes'" },
    { "[launcher]\nautostart-domains=a;../b\n", "[launcher] autostart-domains:" },
    { "[launcher]\nsupervise=perhaps\n", "[launcher] supervise:" },
    { "[launcher]\nrestart-backoff-max=0\n", "[launcher] restart-backoff-max:" },
    { "[launcher]\nwait=99999\n", "[launcher] wait:" },
    { "[launcher]\nrun-dir=run\n", "[launcher] run-dir:" },
    { "[launcher]\nuri=\n", "[launcher] uri: empty" },
    { "[helper]\nmax-fps=0\n", "[helper] max-fps:" },
    { "[helper]\nmax-fps=31\n", "[helper] max-fps:" },
    { "[helper]\nconsole-page=maybe\n", "[helper] console-page:" },
    { "[sessions]\nmax=0\n", "[sessions] max:" },
    { "[sessions]\nmax=17\n", "[sessions] max:" },
    { "[sessions]\nwhen-full=kick\n", "[sessions] when-full: 'kick' is not 'refuse' or 'replace'" },
    { "not a key file\n", "bad.conf:" },
};

static QsLaunchConfig *with_qemu_conf(const char *qemu_conf, const char *conf, GError **err)
{
    g_autofree char *dir = g_dir_make_tmp("qs-qemu-conf-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "qemu.conf", NULL);
    g_autofree char *data = g_strdup_printf("[launcher]\nqemu-conf=%s\n%s", path, conf);
    QsLaunchConfig *c;

    g_assert_true(g_file_set_contents(path, qemu_conf, -1, NULL));
    c = qs_launch_config_load_data(data, "t.conf", err);
    g_unlink(path);
    g_rmdir(dir);
    return c;
}

/* What [listen] does not say, libvirt's qemu.conf says for its own SPICE
 * servers; what it says wins. */
static void test_libvirt_defaults(void)
{
    const char *qc = "# libvirt's file, shortened\n"
                     "spice_listen = \"192.0.2.9\"   # a comment\n"
                     "spice_tls = 1\n"
                     "spice_tls_x509_cert_dir = \"/srv/pki/spice\"\n"
                     "spice_listen = \"198.51.100.1\"\n";   /* the first counts */
    g_autoptr(GError) err = NULL;
    g_autoptr(QsLaunchConfig) c = with_qemu_conf(qc, "", &err);
    g_autoptr(QsLaunchConfig) d = NULL;
    g_autoptr(QsLaunchConfig) e = NULL;

    g_assert_no_error(err);
    g_assert_cmpstr(c->listen_address, ==, "192.0.2.9");
    g_assert_cmpstr(c->listen_from, ==, "qemu.conf spice_listen");
    g_assert_true(c->tls);
    g_assert_true(c->plain);
    g_assert_cmpstr(c->tls_dir, ==, "/srv/pki/spice");
    g_assert_false(c->tls_dir_set);
    d = with_qemu_conf(qc, "[listen]\naddress=0.0.0.0\ntls=false\ntls-dir=/etc/x\n"
                           "public-address=203.0.113.5\n", &err);
    g_assert_no_error(err);
    g_assert_cmpstr(d->listen_address, ==, "0.0.0.0");
    g_assert_cmpstr(d->listen_from, ==, "[listen] address");
    g_assert_false(d->tls);
    g_assert_cmpstr(d->tls_dir, ==, "/etc/x");
    g_assert_cmpstr(d->public_address, ==, "203.0.113.5");
    /* Without spice_tls_x509_cert_dir: libvirt-spice if it exists, else
     * default_tls_x509_cert_dir. */
    e = with_qemu_conf("default_tls_x509_cert_dir = '/srv/pki/all'\n", "", &err);
    g_assert_no_error(err);
    g_assert_false(e->tls);
    g_assert_cmpstr(e->tls_dir, ==, g_file_test("/etc/pki/libvirt-spice", G_FILE_TEST_IS_DIR)
                                    ? "/etc/pki/libvirt-spice" : "/srv/pki/all");
    {
        g_autoptr(QsLaunchConfig) f = with_qemu_conf("spice_listen = \"hv1\"\n", "", &err);

        g_assert_null(f);
        g_assert_nonnull(strstr(err->message, "qemu.conf: spice_listen 'hv1' is not a numeric "
                                              "address: set [listen] address"));
        g_clear_error(&err);
    }
    {
        g_autoptr(QsLaunchConfig) f =
            with_qemu_conf("spice_listen = \"hv1\"\n", "[listen]\naddress=::\n", &err);

        g_assert_no_error(err);
        g_assert_cmpstr(f->listen_address, ==, "::");
    }
    {
        g_autoptr(QsLaunchConfig) f = with_qemu_conf("spice_tls = 2\n", "", &err);

        g_assert_null(f);
        g_assert_nonnull(strstr(err->message, "libvirt's qemu.conf, read for what [listen] "
                                              "does not say ([launcher] qemu-conf): "));
        g_assert_nonnull(strstr(err->message, "qemu.conf:1: spice_tls must be 0 or 1"));
    }
}

/* libvirt's syntax: what it accepts reads, each refusal names its line. */
static void test_qemu_conf_syntax(void)
{
    const char *good =
        "\n# comment\n  # indented comment\n"
        "cgroup_device_acl = [\n    \"/dev/null\", \"/dev/full\",\n    'x', [ 1, -2 ],\n]\n"
        "nvram = [ ]; user = \"root\"\n"
        "security_driver = \"\"\"two\nlines\"\"\"\n"
        "max_files = +32768\n"
        "spice_listen = \"::1\"\n"
        "spice_tls_x509_cert_dir = \"/a # not a comment\"\n";
    const struct {
        const char *text, *why;
    } bad[] = {
        { "spice_listen = \"x\n", "t:1: a string not closed" },
        { "a = 1\nb = 'y\n'\n", "t:2: a string not closed" },
        { "a = \"\"\"open\n", "a string opened with \"\"\" is not closed" },
        { "a 1\n", "t:1: '=' must follow the name a" },
        { "1a = 1\n", "a line must start with a name" },
        { "a = [ 1 2 ]\n", "a list needs ','" },
        { "a = [ 1, \n", "a value is missing" },
        { "a = yes\n", "a value must be a number, a string or a list" },
        { "a = -\n", "a number without digits" },
        { "a = 99999999999999999999\n", "a number out of range" },
        { "a = 1 b = 2\n", "a line end or ';' must follow the value of a" },
        { "spice_listen = 1\n", "spice_listen must be a string" },
        { "spice_tls = \"1\"\n", "spice_tls must be 0 or 1" },
        { "a = [[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]\n", "lists nested over 16 deep" },
    };
    QsQemuConf q;
    g_autoptr(GError) err = NULL;

    g_assert_true(qs_qemu_conf_parse(good, strlen(good), "t", &q, &err));
    g_assert_no_error(err);
    g_assert_cmpstr(q.spice_listen, ==, "::1");
    g_assert_cmpstr(q.spice_tls_dir, ==, "/a # not a comment");
    g_assert_null(q.default_tls_dir);
    g_assert_cmpint(q.spice_tls, ==, -1);
    qs_qemu_conf_clear(&q);
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_clear_error(&err);
        if (qs_qemu_conf_parse(bad[i].text, strlen(bad[i].text), "t", &q, &err) ||
            !strstr(err->message, bad[i].why)) {
            g_error("case %u: '%s', expected '%s'", i, err ? err->message : "accepted",
                    bad[i].why);
        }
    }
    /* An absent file is libvirt's defaults; an unreadable one an error. */
    g_clear_error(&err);
    g_assert_true(qs_qemu_conf_load("/nonexistent/qemu.conf", &q, &err));
    g_assert_null(q.spice_listen);
    g_assert_false(qs_qemu_conf_load("/", &q, &err));
}

static void test_bad_values(void)
{
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GError) err = NULL;
        g_autoptr(QsLaunchConfig) c =
            qs_launch_config_load_data(bad[i].data, "bad.conf", &err);

        if (c || !err || !strstr(err->message, bad[i].expect)) {
            g_error("case %u (%s): got %s, expected '%s'", i, bad[i].data,
                    err ? err->message : "success", bad[i].expect);
        }
    }
}

static void test_files(void)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *dir = g_dir_make_tmp("qs-conf-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "q.conf", NULL);
    g_autofree char *missing = g_build_filename(dir, "missing.conf", NULL);
    QsLaunchConfig *c;

    g_assert_true(g_file_set_contents(path, "[listen]\nports=7000-7001\n", -1, NULL));
    c = qs_launch_config_load(path, &err);
    g_assert_no_error(err);
    g_assert_cmpuint(c->port_min, ==, 7000);
    g_assert_cmpstr(c->path, ==, path);
    qs_launch_config_free(c);

    /* An explicit file that is missing is an error naming it. */
    c = qs_launch_config_load(missing, &err);
    g_assert_null(c);
    g_assert_nonnull(strstr(err->message, missing));
    g_clear_error(&err);

    g_assert_true(g_file_set_contents(path, "[listen]\ntls=yes!\n", -1, NULL));
    c = qs_launch_config_load(path, &err);
    g_assert_null(c);
    g_assert_nonnull(strstr(err->message, path));
    g_assert_nonnull(strstr(err->message, "[listen] tls"));
    g_remove(path);
    g_rmdir(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/launcher/config/defaults", test_defaults);
    g_test_add_func("/launcher/config/default-tls-dir", test_default_tls_dir);
    g_test_add_func("/launcher/config/default-user", test_default_user);
    g_test_add_func("/launcher/config/all-keys", test_all_keys);
    g_test_add_func("/launcher/config/single-port", test_single_port);
    g_test_add_func("/launcher/config/bad-values", test_bad_values);
    g_test_add_func("/launcher/config/libvirt-defaults", test_libvirt_defaults);
    g_test_add_func("/launcher/config/qemu-conf-syntax", test_qemu_conf_syntax);
    g_test_add_func("/launcher/config/files", test_files);
    return g_test_run();
}
