/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of the console formats: URI, JSON, .vv, Kerbside's static entry,
 * the console page's link and its QR code; the certificate subject a .vv
 * names. */

#include <string.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include "qs-launch-address.h"
#include "qs-launch-cert.h"
#include "qs-launch-format.h"
#include "qs-launch-qr.h"

static QsLaunchState st = {
    .domain = "vm1",
    .uuid = "0b4d1f3e-7a2c-4c57-9b1e-1d2a3b4c5d6e",
    .mode = "p2p",
    .helper_pid = 77,
    .host = "hv1.example",
    .port = 5900,
    .tls_port = 5901,
    .ticket_file = "/run/qemu-spice/vm1.ticket",
    .ticket_expiry = 1800000000,
    .restarts = 1,
};

static char *fmt(const QsConsoleInfo *info, const char *name, GError **err)
{
    QsConsoleFormat f;

    g_assert_true(qs_console_format_parse(name, &f, NULL));
    return qs_console_format(info, f, err);
}

static void test_uri(void)
{
    QsConsoleInfo i = { .state = &st, .password = "a b&c" };
    QsLaunchState v6 = st;
    QsConsoleInfo j = { .state = &v6, .password = NULL };
    g_autofree char *u = fmt(&i, "uri", NULL);
    g_autofree char *w = NULL;

    g_assert_cmpstr(u, ==, "spice://hv1.example:5900?tls-port=5901&password=a%20b%26c\n");
    v6.host = "fd00::1";
    v6.port = 0;
    w = fmt(&j, "uri", NULL);
    g_assert_cmpstr(w, ==, "spice://[fd00::1]?tls-port=5901\n");
}

static void test_json(void)
{
    QsConsoleInfo i = { .state = &st, .password = "pw\"1", .host_subject = NULL };
    g_autofree char *j = fmt(&i, "json", NULL);

    g_assert_cmpstr(j, ==,
        "{\"type\":\"spice\",\"domain\":\"vm1\",\"uuid\":"
        "\"0b4d1f3e-7a2c-4c57-9b1e-1d2a3b4c5d6e\",\"host\":\"hv1.example\","
        "\"port\":5900,\"tls_port\":5901,\"password\":\"pw\\\"1\","
        "\"ticket_expiry\":1800000000,\"ticket_file\":"
        "\"/run/qemu-spice/vm1.ticket\",\"host_subject\":null,\"pid\":77,"
        "\"restarts\":1}\n");
}

static void check_str(GKeyFile *kf, const char *key, const char *want)
{
    g_autofree char *v = g_key_file_get_string(kf, "virt-viewer", key, NULL);

    g_assert_cmpstr(v, ==, want);
}

static void test_vv(void)
{
    QsConsoleInfo i = {
        .state = &st, .password = "pw#1;x",
        .ca_cert = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        .host_subject = "C=XX,O=Ex\\, Inc.,CN=hv1",
    };
    QsLaunchState plain = st;
    QsConsoleInfo j = { .state = &plain, .password = "pw", .ca_cert = "x" };
    g_autofree char *v = fmt(&i, "vv", NULL);
    g_autofree char *p = NULL;
    g_autoptr(GKeyFile) kf = g_key_file_new();
    g_autofree char *ca = NULL;
    g_auto(GStrv) secure = NULL;

    g_assert_true(g_key_file_load_from_data(kf, v, -1, G_KEY_FILE_NONE, NULL));
    check_str(kf, "type", "spice");
    check_str(kf, "host", "hv1.example");
    /* A TLS console: every channel over TLS, the plain port left out. */
    g_assert_false(g_key_file_has_key(kf, "virt-viewer", "port", NULL));
    g_assert_cmpint(g_key_file_get_integer(kf, "virt-viewer", "tls-port", NULL), ==, 5901);
    secure = g_key_file_get_string_list(kf, "virt-viewer", "secure-channels", NULL, NULL);
    g_assert_cmpuint(g_strv_length(secure), ==, 10);
    g_assert_true(g_strv_contains((const char *const *)secure, "main"));
    g_assert_true(g_strv_contains((const char *const *)secure, "usbredir"));
    check_str(kf, "password", "pw#1;x");
    check_str(kf, "host-subject", "C=XX,O=Ex\\, Inc.,CN=hv1");
    check_str(kf, "title", "vm1");
    /* Opened again, it links again (or says why not). */
    g_assert_false(g_key_file_has_key(kf, "virt-viewer", "delete-this-file", NULL));
    /* GKeyFile (like remote-viewer's reader) turns \n back into newlines. */
    ca = g_key_file_get_string(kf, "virt-viewer", "ca", NULL);
    g_assert_cmpstr(ca, ==, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----");

    plain.tls_port = 0;
    p = fmt(&j, "vv", NULL);
    g_assert_cmpstr(p, ==, "[virt-viewer]\ntype=spice\nhost=hv1.example\nport=5900\n"
                           "password=pw\ntitle=vm1\n");
}

static void test_url(void)
{
    const char *token = "qst.AQICdzWUAAECAwQFBgcIb44a1Dj-ngIc2aEAh24WvlUZkDk";
    QsConsoleInfo i = { .state = &st, .password = token };
    QsLaunchState plain = st, v6 = st;
    QsConsoleInfo j = { .state = &plain, .password = token };
    QsConsoleInfo k = { .state = &v6, .password = token };
    QsConsoleInfo none = { .state = &st };
    g_autofree char *a = fmt(&i, "url", NULL);
    g_autofree char *b = NULL;
    g_autofree char *c = NULL;
    g_autoptr(GError) err = NULL;

    g_assert_cmpstr(a, ==, "https://hv1.example:5901/#qst.AQICdzWUAAECAwQFBgcIb44a1Dj-"
                           "ngIc2aEAh24WvlUZkDk\n");
    plain.tls_port = 0;
    b = fmt(&j, "url", NULL);
    g_assert_true(g_str_has_prefix(b, "http://hv1.example:5900/#qst."));
    v6.host = "fd00::1";
    c = fmt(&k, "url", NULL);
    g_assert_true(g_str_has_prefix(c, "https://[fd00::1]:5901/#qst."));
    g_assert_null(fmt(&none, "url", &err));
    g_assert_nonnull(strstr(err->message, "carries a token"));
}

/* The code's shape: a square of light and dark half blocks, four light
 * modules of quiet zone around it; ANSI colours only when asked. */
static void test_qr(void)
{
    g_autofree char *plain = qs_qr_render("https://hv1.example:5901/#qst.x", FALSE, NULL);
    g_autofree char *colour = qs_qr_render("https://hv1.example:5901/#qst.x", TRUE, NULL);
    g_auto(GStrv) lines = g_strsplit(plain, "\n", -1);
    guint n = g_strv_length(lines) - 1;
    glong width = g_utf8_strlen(lines[0], -1);

    g_assert_null(strchr(plain, '\033'));
    g_assert_true(g_str_has_prefix(colour, "\033[97;40m"));
    /* Version 3 (29 modules) at level M for 31 bytes, plus the zone. */
    g_assert_cmpint(width, ==, 29 + 8);
    g_assert_cmpuint(n, ==, (29 + 8 + 1) / 2);
    for (guint i = 0; i < n; i++) {
        g_assert_cmpint(g_utf8_strlen(lines[i], -1), ==, width);
    }
    /* The top two text rows are quiet zone: all light. */
    for (const char *p = lines[0]; *p; p = g_utf8_next_char(p)) {
        g_assert_cmpint(g_utf8_get_char(p), ==, 0x2588);
    }
    /* The code's own first row starts with a finder pattern: dark. */
    g_assert_true(g_str_has_prefix(lines[2], "\u2588\u2588\u2588\u2588 "));
}

/* The subject a .vv's host-subject gets: the certificate's order, escapes
 * kept; a multi-valued name refused. */
static void test_cert_subject(void)
{
    g_autofree char *dir = g_dir_make_tmp("qs-launch-cert-XXXXXX", NULL);
    g_autofree char *key = g_build_filename(dir, "key.pem", NULL);
    g_autofree char *cert = g_build_filename(dir, "cert.pem", NULL);
    g_autofree char *multi = g_build_filename(dir, "multi.pem", NULL);
    const char *subjects[][2] = {
        { "/C=XX/O=qemu-spice/CN=localhost", cert },
        { "/C=XX/O=a+OU=b/CN=hv1", multi },
    };
    g_autoptr(GError) err = NULL;
    g_autofree char *s = NULL;

    for (guint i = 0; i < G_N_ELEMENTS(subjects); i++) {
        const char *argv[] = {
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:prime256v1", "-nodes", "-multivalue-rdn", "-subj",
            subjects[i][0], "-days", "1", "-keyout", key, "-out", subjects[i][1], NULL,
        };
        gint status;

        g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL,
                                   G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL |
                                   G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL,
                                   &status, NULL));
        g_assert_true(g_spawn_check_wait_status(status, NULL));
    }
    s = qs_cert_subject(cert, &err);
    g_assert_no_error(err);
    g_assert_cmpstr(s, ==, "C=XX,O=qemu-spice,CN=localhost");
    g_assert_null(qs_cert_subject(multi, &err));
    g_assert_nonnull(strstr(err->message, "multi-valued"));
    g_clear_error(&err);
    g_assert_null(qs_cert_subject(key, &err));
    g_assert_nonnull(strstr(err->message, "no certificate subject"));
    g_unlink(key);
    g_unlink(cert);
    g_unlink(multi);
    g_rmdir(dir);
}

static void test_kerbside(void)
{
    QsConsoleInfo i = { .state = &st, .password = "pw", .hypervisor = "hv1",
                        .hypervisor_ip = "192.0.2.7",
                        .hypervisor_ip_from = "[listen] address" };
    QsLaunchState tls_only = st;
    QsConsoleInfo t = { .state = &tls_only, .password = "pw",
                        .hypervisor_ip = "192.0.2.7" };
    QsConsoleInfo no_ip = { .state = &st, .password = "pw" };
    g_autoptr(GError) err = NULL;
    g_autofree char *k = fmt(&i, "kerbside", NULL);
    g_autofree char *none = NULL;
    g_autofree char *unresolved = NULL;

    /* the address fields get an address, never the host name */
    g_assert_cmpstr(k, ==,
        "consoles:\n"
        "  - uuid: \"0b4d1f3e-7a2c-4c57-9b1e-1d2a3b4c5d6e\"\n"
        "    name: \"vm1\"\n"
        "    hypervisor: \"hv1\"\n"
        "    # hypervisor_ip: [listen] address\n"
        "    hypervisor_ip: \"192.0.2.7\"\n"
        "    insecure_port: 5900\n"
        "    secure_port: 5901\n"
        "    ticket: \"pw\"\n");
    unresolved = fmt(&no_ip, "kerbside", &err);
    g_assert_null(unresolved);
    g_assert_nonnull(strstr(err->message, "hypervisor_ip needs an address"));
    g_clear_error(&err);
    tls_only.port = 0;
    none = fmt(&t, "kerbside", &err);
    g_assert_null(none);
    g_assert_nonnull(strstr(err->message, "insecure_port"));
}

/* The choices that need no resolver: an address as the reported host, then
 * a specific listen address. */
static void test_kerbside_address(void)
{
    QsLaunchState s = st;
    const char *from = NULL;
    g_autoptr(GError) err = NULL;
    g_autofree char *a = NULL;
    g_autofree char *b = NULL;
    g_autofree char *c = NULL;

    s.host = (char *)"198.51.100.4";
    s.listen = (char *)"0.0.0.0";
    a = qs_console_address(&s, &from, &err);
    g_assert_no_error(err);
    g_assert_cmpstr(a, ==, "198.51.100.4");
    g_assert_nonnull(strstr(from, "reported host"));
    s.host = (char *)"hv1.example";
    s.listen = (char *)"192.0.2.9";
    b = qs_console_address(&s, &from, &err);
    g_assert_cmpstr(b, ==, "192.0.2.9");
    g_assert_cmpstr(from, ==, "[listen] address");
    s.host = (char *)"2001:db8::5";
    c = qs_console_address(&s, &from, &err);
    g_assert_cmpstr(c, ==, "2001:db8::5");
}

/* What a console reports without [listen] host: a specific listen
 * address, else public-address, else an address of this machine that a
 * client elsewhere could use; never the host name's 127.0.1.1. */
static void test_reported_address(void)
{
    g_autoptr(QsLaunchConfig) cfg = g_new0(QsLaunchConfig, 1);
    const char *from = NULL;
    g_autofree char *a = NULL;
    g_autofree char *b = NULL;
    g_autofree char *c = NULL;
    g_autoptr(GInetAddress) ca = NULL;

    cfg->listen_address = g_strdup("192.0.2.9");
    cfg->listen_from = "qemu.conf spice_listen";
    cfg->public_address = g_strdup("203.0.113.5");
    a = qs_reported_address(cfg, &from);
    g_assert_cmpstr(a, ==, "192.0.2.9");
    g_assert_cmpstr(from, ==, "qemu.conf spice_listen");
    g_free(cfg->listen_address);
    cfg->listen_address = g_strdup("0.0.0.0");
    b = qs_reported_address(cfg, &from);
    g_assert_cmpstr(b, ==, "203.0.113.5");
    g_assert_cmpstr(from, ==, "[listen] public-address");
    g_clear_pointer(&cfg->public_address, g_free);
    c = qs_reported_address(cfg, &from);
    ca = g_inet_address_new_from_string(c);
    g_assert_nonnull(ca);
    g_assert_cmpint(g_inet_address_get_family(ca), ==, G_SOCKET_FAMILY_IPV4);
    g_assert_cmpstr(c, !=, "127.0.1.1");
    /* Loopback only on a machine without any other address (a package
     * build's network namespace, say). */
    g_assert_true(g_inet_address_get_is_loopback(ca) ==
                  (strcmp(from, "loopback: this host has no other address") == 0));
}

static void test_unknown(void)
{
    g_autoptr(GError) err = NULL;
    QsConsoleFormat f;

    g_assert_false(qs_console_format_parse("xml", &f, &err));
    g_assert_nonnull(strstr(err->message, "unknown format 'xml'"));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/launcher/format/uri", test_uri);
    g_test_add_func("/launcher/format/json", test_json);
    g_test_add_func("/launcher/format/vv", test_vv);
    g_test_add_func("/launcher/format/url", test_url);
    g_test_add_func("/launcher/format/qr", test_qr);
    g_test_add_func("/launcher/format/cert-subject", test_cert_subject);
    g_test_add_func("/launcher/format/kerbside", test_kerbside);
    g_test_add_func("/launcher/format/kerbside-address", test_kerbside_address);
    g_test_add_func("/launcher/format/reported-address", test_reported_address);
    g_test_add_func("/launcher/format/unknown", test_unknown);
    return g_test_run();
}
