/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The net options: parsing through the GOptionGroup and validation. */

#include <string.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>
#include "net/qs-net-config.h"
#include "net/qs-ticket.h"
#include "net/qs-web.h"

static char *ticket_path;
static char *view_path;         /* another password */
static char *keys_path;         /* token keys */
static char *bad_keys_path;     /* a key file with a short key */

/* Parses `args` (NULL-terminated) with the net group and validates. */
static gboolean parse(QsNetConfig *cfg, const char *const *args,
                      GError **error)
{
    g_autoptr(GOptionContext) ctx = g_option_context_new(NULL);
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    char **v;
    int argc;
    gboolean ok;

    g_ptr_array_add(argv, (char *)"qemu-spice");
    for (guint i = 0; args[i]; i++) {
        g_ptr_array_add(argv, (char *)args[i]);
    }
    g_ptr_array_add(argv, NULL);
    argc = (int)argv->len - 1;
    v = (char **)argv->pdata;
    qs_net_config_init(cfg);
    g_option_context_add_group(ctx, qs_net_option_group(cfg));
    ok = g_option_context_parse(ctx, &argc, &v, error) &&
         qs_net_config_validate(cfg, error);
    return ok;
}

static void expect(gboolean ok, const char *const *args)
{
    QsNetConfig cfg;
    g_autoptr(GError) error = NULL;
    gboolean res = parse(&cfg, args, &error);

    if (!res) {
        g_test_message("refused: %s", error->message);
    }
    g_assert_cmpint(res, ==, ok);
    qs_net_config_clear(&cfg);
}

static void test_combinations(void)
{
    const char *tf = ticket_path;

    expect(TRUE, (const char *[]){ "--listen", "127.0.0.1:5930",
                                   "--ticket-file", tf, NULL });
    expect(TRUE, (const char *[]){ "--listen", "[::1]:5930",
                                   "--disable-ticketing", NULL });
    /* No ticket on a non-loopback plain listener needs --insecure. */
    expect(FALSE, (const char *[]){ "--listen", "0.0.0.0:5930",
                                    "--disable-ticketing", NULL });
    expect(TRUE, (const char *[]){ "--listen", "0.0.0.0:5930",
                                   "--disable-ticketing", "--insecure",
                                   NULL });
    expect(TRUE, (const char *[]){ "--listen", "0.0.0.0:5930",
                                   "--ticket-file", tf, NULL });
    /* A ticket is required unless disabled; never both. */
    expect(FALSE, (const char *[]){ "--listen", "127.0.0.1:5930", NULL });
    expect(FALSE, (const char *[]){ "--listen", "127.0.0.1:5930",
                                    "--ticket-file", tf,
                                    "--disable-ticketing", NULL });
    expect(FALSE, (const char *[]){ "--ticket-file", tf, NULL });
    expect(FALSE, (const char *[]){ "--listen", "5930", "--ticket-file", tf,
                                    NULL });
    expect(FALSE, (const char *[]){ "--listen", "127.0.0.1:1",
                                    "--listen-fd", "3", "--ticket-file", tf,
                                    NULL });
    expect(FALSE, (const char *[]){ "--tls-listen", "127.0.0.1:5931",
                                    "--ticket-file", tf, NULL });
    expect(FALSE, (const char *[]){ "--listen", "127.0.0.1:5930",
                                    "--tls-dir", "/tmp", "--ticket-file", tf,
                                    NULL });
    expect(TRUE, (const char *[]){ "--listen", "127.0.0.1:5930",
                                   "--tls-listen", "127.0.0.1:5931",
                                   "--tls-dir", "/tmp", "--ticket-file", tf,
                                   "--secure-channels", "main,display",
                                   NULL });
    expect(FALSE, (const char *[]){ "--listen", "127.0.0.1:5930",
                                    "--tls-listen", "127.0.0.1:5931",
                                    "--tls-dir", "/tmp", "--ticket-file", tf,
                                    "--secure-channels", "main,bogus", NULL });
    expect(FALSE, (const char *[]){ "--listen", "127.0.0.1:5930",
                                    "--ticket-file", tf,
                                    "--secure-channels", "all", NULL });
    expect(FALSE, (const char *[]){ "--listen", "127.0.0.1:5930",
                                    "--ticket-file", tf, "--ticket-expiry",
                                    "tomorrow", NULL });
    expect(FALSE, (const char *[]){ "--listen", "127.0.0.1:5930",
                                    "--ticket-file", "/nonexistent/ticket",
                                    NULL });
    expect(FALSE, (const char *[]){ "--listen", "127.0.0.1:5930",
                                    "--ticket-file", tf, "--link-timeout",
                                    "0", NULL });
}

static void test_link_rate_options(void)
{
    const char *tf = ticket_path;
    QsNetConfig cfg;
    g_autoptr(GError) error = NULL;

    /* On by default. */
    g_assert_true(parse(&cfg, (const char *[]){ "--listen", "127.0.0.1:5930",
                                                "--ticket-file", tf, NULL },
                        &error));
    g_assert_cmpint(cfg.max_link_rate, ==, 10);
    g_assert_cmpint(cfg.max_link_burst, ==, 30);
    qs_net_config_clear(&cfg);
    /* 0 turns it off; a burst of 0 or negative values are refused. */
    expect(TRUE, (const char *[]){ "--listen", "127.0.0.1:5930",
                                   "--ticket-file", tf, "--max-link-rate",
                                   "0", NULL });
    expect(TRUE, (const char *[]){ "--listen", "127.0.0.1:5930",
                                   "--ticket-file", tf, "--max-link-rate",
                                   "2", "--max-link-burst", "1", NULL });
    expect(FALSE, (const char *[]){ "--listen", "127.0.0.1:5930",
                                    "--ticket-file", tf, "--max-link-burst",
                                    "0", NULL });
    expect(FALSE, (const char *[]){ "--listen", "127.0.0.1:5930",
                                    "--ticket-file", tf, "--max-link-rate",
                                    "-1", NULL });
}

static void test_secure_mask(void)
{
    QsNetConfig cfg;

    g_assert_true(parse(&cfg, (const char *[]){
        "--tls-listen", "127.0.0.1:5931", "--tls-dir", "/tmp",
        "--disable-ticketing", "--secure-channels", "display, cursor",
        NULL }, NULL));
    g_assert_cmphex(cfg.secure_mask, ==, (1u << 2) | (1u << 4));
    g_assert_null(cfg.ticket);
    qs_net_config_clear(&cfg);
}

static void test_expiry_option(void)
{
    QsNetConfig cfg;
    gint64 now = g_get_real_time();

    g_assert_true(parse(&cfg, (const char *[]){
        "--listen", "127.0.0.1:5930", "--ticket-file", ticket_path,
        "--ticket-expiry", "+60", NULL }, NULL));
    g_assert_nonnull(cfg.ticket);
    g_assert_cmpint(qs_ticket_get_expiry(cfg.ticket), >=,
                    now + 60 * G_USEC_PER_SEC);
    g_assert_cmpint(qs_ticket_get_expiry(cfg.ticket), <,
                    now + 70 * G_USEC_PER_SEC);
    g_assert_cmpint(qs_ticket_check(cfg.ticket, (const guint8 *)"file-pw", 7,
                                    now), ==, QS_TICKET_OK);
    qs_net_config_clear(&cfg);
}

static void test_ticket_fd(void)
{
    QsNetConfig cfg;
    int fds[2];
    g_autofree char *arg = NULL;
    const char *text = "fd-pw\nexpiry=@4000000000\n";

    g_assert_cmpint(pipe(fds), ==, 0);
    g_assert_cmpint(write(fds[1], text, strlen(text)), ==, strlen(text));
    close(fds[1]);
    arg = g_strdup_printf("%d", fds[0]);
    g_assert_true(parse(&cfg, (const char *[]){
        "--listen", "127.0.0.1:5930", "--ticket-fd", arg, NULL }, NULL));
    g_assert_cmpint(qs_ticket_get_expiry(cfg.ticket), ==,
                    G_GINT64_CONSTANT(4000000000) * G_USEC_PER_SEC);
    g_assert_cmpint(qs_ticket_check(cfg.ticket, (const guint8 *)"fd-pw", 5,
                                    g_get_real_time()), ==, QS_TICKET_OK);
    /* The descriptor was consumed and closed. */
    g_assert_cmpint(cfg.ticket_fd, ==, -1);
    g_assert_cmpint(close(fds[0]), ==, -1);
    qs_net_config_clear(&cfg);
}

/* --view-ticket-file/-fd: a second password, loaded beside the ticket;
 * never the ticket's own, never without ticketing, never both sources. */
static void test_view_ticket(void)
{
    const char *tf = ticket_path, *vf = view_path;
    QsNetConfig cfg;
    g_autoptr(GError) error = NULL;

    g_assert_true(parse(&cfg, (const char *[]){ "--listen", "127.0.0.1:5930", "--ticket-file", tf,
                                                "--view-ticket-file", vf, NULL }, NULL));
    g_assert_nonnull(cfg.view_ticket);
    g_assert_cmpint(qs_ticket_check(cfg.view_ticket, (const guint8 *)"view-pw", 7,
                                    g_get_real_time()), ==, QS_TICKET_OK);
    qs_net_config_clear(&cfg);
    g_assert_false(parse(&cfg, (const char *[]){ "--listen", "127.0.0.1:5930", "--ticket-file", tf,
                                                 "--view-ticket-file", tf, NULL }, &error));
    g_assert_nonnull(strstr(error->message, "the view-only ticket has the same password"));
    qs_net_config_clear(&cfg);
    expect(FALSE, (const char *[]){ "--listen", "127.0.0.1:5930", "--disable-ticketing",
                                    "--view-ticket-file", vf, NULL });
    expect(FALSE, (const char *[]){ "--listen", "127.0.0.1:5930", "--ticket-file", tf,
                                    "--view-ticket-file", vf, "--view-ticket-fd", "0", NULL });
    expect(FALSE, (const char *[]){ "--listen", "127.0.0.1:5930", "--ticket-file", tf,
                                    "--view-ticket-file", "/nonexistent/view", NULL });
}

/* Token keys: beside a ticket or instead of one; parsed at validation; a
 * credential on every non-loopback listener unless --insecure says not. */
static void test_token_options(void)
{
    const char *tf = ticket_path, *vf = view_path, *kf = keys_path;
    QsNetConfig cfg;
    g_autoptr(GError) error = NULL;

    g_assert_true(parse(&cfg, (const char *[]){ "--listen", "0.0.0.0:5930",
                                                "--token-keys-file", kf, NULL }, NULL));
    g_assert_null(cfg.ticket);
    g_assert_nonnull(cfg.token_keys);
    qs_net_config_clear(&cfg);
    expect(TRUE, (const char *[]){ "--listen", "127.0.0.1:5930", "--ticket-file", tf,
                                   "--token-keys-file", kf, NULL });
    expect(TRUE, (const char *[]){ "--listen", "127.0.0.1:5930", "--view-ticket-file", vf,
                                   "--token-keys-file", kf, NULL });
    g_assert_false(parse(&cfg, (const char *[]){ "--listen", "127.0.0.1:5930",
                                                 "--token-keys-file", bad_keys_path, NULL },
                         &error));
    g_assert_nonnull(strstr(error->message, "key-1 is not 64 hex digits"));
    qs_net_config_clear(&cfg);
    expect(FALSE, (const char *[]){ "--listen", "127.0.0.1:5930", "--token-keys-file", kf,
                                    "--token-keys-fd", "0", NULL });
    expect(FALSE, (const char *[]){ "--listen", "127.0.0.1:5930", "--token-keys-file", kf,
                                    "--disable-ticketing", NULL });
    expect(FALSE, (const char *[]){ "--listen", "127.0.0.1:5930", "--token-keys-file", kf,
                                    "--ticket-expiry", "60", NULL });
    expect(FALSE, (const char *[]){ "--listen", "127.0.0.1:5930", "--token-keys-file",
                                    "/nonexistent/keys", NULL });
    /* --insecure names the proxy-only case and nothing else. */
    expect(FALSE, (const char *[]){ "--listen", "127.0.0.1:5930", "--ticket-file", tf,
                                    "--insecure", NULL });
    expect(FALSE, (const char *[]){ "--tls-listen", "0.0.0.0:5931", "--tls-dir", "/tmp",
                                    "--disable-ticketing", NULL });
    expect(TRUE, (const char *[]){ "--tls-listen", "0.0.0.0:5931", "--tls-dir", "/tmp",
                                   "--disable-ticketing", "--insecure", NULL });
}

/* The console page: on by default (from Debian's spice-html5, which
 * tools/install-deps installs), off by a switch; a directory given that
 * holds no spice-html5 is a usage error naming it. */
static void test_console_page_options(void)
{
    const char *tf = ticket_path;
    QsNetConfig cfg;
    g_autoptr(GError) error = NULL;

    g_assert_true(parse(&cfg, (const char *[]){ "--listen", "127.0.0.1:5930",
                                                "--ticket-file", tf, NULL }, NULL));
    g_assert_nonnull(cfg.web);
    g_assert_null(qs_web_missing(cfg.web));
    g_assert_cmpuint(qs_web_n_files(cfg.web), >=, 20);
    qs_net_config_clear(&cfg);
    g_assert_true(parse(&cfg, (const char *[]){ "--listen", "127.0.0.1:5930",
                                                "--ticket-file", tf, "--no-console-page",
                                                NULL }, NULL));
    g_assert_null(cfg.web);
    qs_net_config_clear(&cfg);
    g_assert_false(parse(&cfg, (const char *[]){ "--listen", "127.0.0.1:5930",
                                                 "--ticket-file", tf, "--spice-html5-dir",
                                                 "/nonexistent", NULL }, &error));
    g_assert_nonnull(strstr(error->message, "--spice-html5-dir: spice-html5 is not installed"
                                            " on this host: no /nonexistent/main.js"));
    qs_net_config_clear(&cfg);
    expect(FALSE, (const char *[]){ "--listen", "127.0.0.1:5930", "--ticket-file", tf,
                                    "--no-console-page", "--spice-html5-dir",
                                    QS_WEB_HTML5_DIR, NULL });
}

int main(int argc, char **argv)
{
    g_autofree char *dir = NULL;
    int rc;

    g_test_init(&argc, &argv, NULL);
    dir = g_dir_make_tmp("qs-net-cfg-XXXXXX", NULL);
    ticket_path = g_build_filename(dir, "ticket", NULL);
    g_assert_true(g_file_set_contents(ticket_path, "file-pw\n", -1, NULL));
    view_path = g_build_filename(dir, "view", NULL);
    g_assert_true(g_file_set_contents(view_path, "view-pw\n", -1, NULL));
    g_test_add_func("/net/config/combinations", test_combinations);
    g_test_add_func("/net/config/link-rate-options", test_link_rate_options);
    g_test_add_func("/net/config/secure-mask", test_secure_mask);
    g_test_add_func("/net/config/expiry-option", test_expiry_option);
    g_test_add_func("/net/config/ticket-fd", test_ticket_fd);
    g_test_add_func("/net/config/view-ticket", test_view_ticket);
    g_test_add_func("/net/config/console-page-options", test_console_page_options);
    keys_path = g_build_filename(dir, "keys", NULL);
    g_assert_true(g_file_set_contents(keys_path, "[tokens]\n"
        "vm=6f8e1ad4-2b1c-4f3e-9a7d-0c5b1e2f3a4b\nkey-1="
        "66a5ab5430092c93b26de5ba03fd83c959e548680af967c7460913cbbd48ccc7\n", -1, NULL));
    bad_keys_path = g_build_filename(dir, "bad-keys", NULL);
    g_assert_true(g_file_set_contents(bad_keys_path, "[tokens]\n"
        "vm=6f8e1ad4-2b1c-4f3e-9a7d-0c5b1e2f3a4b\nkey-1=66a5\n", -1, NULL));
    g_test_add_func("/net/config/token-options", test_token_options);
    rc = g_test_run();
    g_unlink(ticket_path);
    g_unlink(view_path);
    g_free(view_path);
    g_unlink(keys_path);
    g_free(keys_path);
    g_unlink(bad_keys_path);
    g_free(bad_keys_path);
    g_rmdir(dir);
    g_free(ticket_path);
    return rc;
}
