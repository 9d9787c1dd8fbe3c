/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of the console formats: URI, JSON, .vv and Kerbside's static entry. */

#include <string.h>
#include <gio/gio.h>
#include "qs-launch-address.h"
#include "qs-launch-format.h"

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
        .state = &st, .password = "pw",
        .ca_cert = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        .host_subject = "CN=hv1",
    };
    g_autofree char *v = fmt(&i, "vv", NULL);
    g_autoptr(GKeyFile) kf = g_key_file_new();
    g_autofree char *ca = NULL;

    g_assert_true(g_key_file_load_from_data(kf, v, -1, G_KEY_FILE_NONE, NULL));
    check_str(kf, "type", "spice");
    check_str(kf, "host", "hv1.example");
    g_assert_cmpint(g_key_file_get_integer(kf, "virt-viewer", "port", NULL), ==, 5900);
    g_assert_cmpint(g_key_file_get_integer(kf, "virt-viewer", "tls-port", NULL), ==, 5901);
    check_str(kf, "password", "pw");
    check_str(kf, "host-subject", "CN=hv1");
    g_assert_cmpint(g_key_file_get_integer(kf, "virt-viewer", "delete-this-file", NULL), ==, 1);
    /* GKeyFile (like remote-viewer's reader) turns \n back into newlines. */
    ca = g_key_file_get_string(kf, "virt-viewer", "ca", NULL);
    g_assert_cmpstr(ca, ==, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----");
    g_assert_null(strstr(v, "\n\n"));
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
    g_test_add_func("/launcher/format/kerbside", test_kerbside);
    g_test_add_func("/launcher/format/kerbside-address", test_kerbside_address);
    g_test_add_func("/launcher/format/unknown", test_unknown);
    return g_test_run();
}
