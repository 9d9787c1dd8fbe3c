/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The launcher's control client (launcher/qs-launch-control.c) against the
 * helper's QsControl: both sides are built from org.qemuspice.Helper1.xml,
 * and this proves they meet on the same object and carry every argument,
 * reply and error across. */
#include <glib/gstdio.h>
#include <gio/gio.h>
#include <unistd.h>

#include "control/qs-control.h"
#include "control-fake.h"
#include "qs-launch-control.h"

/* The launcher's calls block, so the helper's side runs in a thread with
 * its own context, as it runs in its own process. */
typedef struct {
    char *dir;
    char *path;
    int fd;
    ControlFake fake;
    GMainContext *ctx;
    GMainLoop *loop;
    GThread *thread;
} Fixture;

static gpointer serve(gpointer data)
{
    Fixture *fx = data;
    g_autoptr(GError) error = NULL;
    QsControl *ctl;

    g_main_context_push_thread_default(fx->ctx);
    ctl = qs_control_new(fx->fd, &control_fake_ops, &fx->fake, &error);
    g_assert_no_error(error);
    g_main_loop_run(fx->loop);
    qs_control_free(ctl);
    while (g_main_context_iteration(fx->ctx, FALSE)) {
    }
    g_main_context_pop_thread_default(fx->ctx);
    return NULL;
}

static void setup(Fixture *fx, gconstpointer data)
{
    g_autoptr(GError) error = NULL;

    (void)data;
    fx->dir = g_dir_make_tmp("qs-control-client-XXXXXX", &error);
    g_assert_no_error(error);
    fx->path = g_build_filename(fx->dir, "ctl", NULL);
    fx->fd = qs_control_bind(fx->path, &error);
    g_assert_no_error(error);
    fx->ctx = g_main_context_new();
    fx->loop = g_main_loop_new(fx->ctx, FALSE);
    fx->thread = g_thread_new("control", serve, fx);
}

static void teardown(Fixture *fx, gconstpointer data)
{
    (void)data;
    g_main_loop_quit(fx->loop);
    g_thread_join(fx->thread);
    g_main_loop_unref(fx->loop);
    g_main_context_unref(fx->ctx);
    g_unlink(fx->path);
    g_rmdir(fx->dir);
    g_free(fx->path);
    g_free(fx->dir);
    control_fake_clear(&fx->fake);
}

static void test_set_ticket(Fixture *fx, gconstpointer data)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GDBusConnection) conn = qs_control_connect(fx->path, &error);
    guint kept = 99;

    (void)data;
    g_assert_no_error(error);
    fx->fake.clients = 1;
    g_assert_true(qs_control_set_ticket(conn, "s3cret", 1700000000, FALSE,
                                        &kept, &error));
    g_assert_no_error(error);
    g_assert_cmpuint(kept, ==, 1);
    g_assert_cmpstr(fx->fake.password, ==, "s3cret");
    g_assert_cmpint(fx->fake.expiry_us, ==,
                    (gint64)1700000000 * G_USEC_PER_SEC);
    g_assert_true(qs_control_set_ticket(conn, "other", 0, TRUE, &kept,
                                        &error));
    g_assert_cmpuint(kept, ==, 0);
    g_assert_true(fx->fake.disconnect);

    /* the helper's message reaches the launcher's user, named by method */
    g_assert_false(qs_control_set_ticket(conn, "", 0, FALSE, &kept, &error));
    g_assert_cmpstr(error->message, ==, "SetTicket: empty password");
    g_clear_error(&error);
    g_assert_false(qs_control_set_ticket(conn, "x", -5, FALSE, &kept,
                                         &error));
    g_assert_cmpstr(error->message, ==, "SetTicket: expiry must be 0 "
                    "(never) or seconds since the epoch");
    g_assert_cmpstr(fx->fake.password, ==, "other");
}

static void test_set_token_keys(Fixture *fx, gconstpointer data)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GDBusConnection) conn = qs_control_connect(fx->path, &error);

    (void)data;
    g_assert_no_error(error);
    g_assert_true(qs_control_set_token_keys(conn, "[tokens]\nvm=x\n", &error));
    g_assert_no_error(error);
    g_assert_cmpstr(fx->fake.token_keys, ==, "[tokens]\nvm=x\n");
    g_assert_false(qs_control_set_token_keys(conn, "nope", &error));
    g_assert_cmpstr(error->message, ==, "SetTokenKeys: not a key file");
}

static void write_pems(const char *dir, const char *key)
{
    g_autofree char *c = g_build_filename(dir, "server-cert.pem", NULL);
    g_autofree char *k = g_build_filename(dir, "server-key.pem", NULL);
    g_autoptr(GError) error = NULL;

    g_file_set_contents(c, "-----BEGIN CERTIFICATE-----\n", -1, &error);
    g_assert_no_error(error);
    g_file_set_contents(k, key, -1, &error);
    g_assert_no_error(error);
}

static void remove_pems(const char *dir)
{
    g_autofree char *c = g_build_filename(dir, "server-cert.pem", NULL);
    g_autofree char *k = g_build_filename(dir, "server-key.pem", NULL);

    g_unlink(c);
    g_unlink(k);
}

static void test_certificates_and_status(Fixture *fx, gconstpointer data)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GDBusConnection) conn = qs_control_connect(fx->path, &error);
    g_autoptr(GVariant) status = NULL;
    g_autoptr(GVariant) clients = NULL;
    gint64 started = 0;
    guint32 pid = 0;

    (void)data;
    g_assert_no_error(error);
    write_pems(fx->dir, "-----BEGIN PRIVATE KEY-----\n");
    g_assert_true(qs_control_set_certificates(conn, fx->dir, &error));
    g_assert_no_error(error);
    g_assert_cmpstr(fx->fake.cert, ==, "-----BEGIN CERTIFICATE-----\n");
    g_assert_cmpuint(fx->fake.key_len, ==, 28);
    write_pems(fx->dir, "short\n");
    g_assert_false(qs_control_set_certificates(conn, fx->dir, &error));
    g_assert_cmpstr(error->message, ==, "SetCertificates: bad key");
    g_clear_error(&error);
    remove_pems(fx->dir);

    fx->fake.clients = 1;
    status = qs_control_get_status(conn, &error);
    g_assert_no_error(error);
    g_assert_true(g_variant_lookup(status, "started", "x", &started));
    g_assert_cmpint(ABS(started - g_get_real_time() / G_USEC_PER_SEC), <, 60);
    g_assert_true(g_variant_lookup(status, "pid", "u", &pid));
    g_assert_cmpuint(pid, ==, (guint32)getpid());
    clients = g_variant_lookup_value(status, "clients",
                                     G_VARIANT_TYPE("aa{sv}"));
    g_assert_nonnull(clients);
    g_assert_cmpuint(g_variant_n_children(clients), ==, 1);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add("/control/client/set-ticket", Fixture, NULL, setup,
               test_set_ticket, teardown);
    g_test_add("/control/client/set-token-keys", Fixture, NULL, setup,
               test_set_token_keys, teardown);
    g_test_add("/control/client/certificates-and-status", Fixture, NULL,
               setup, test_certificates_and_status, teardown);
    return g_test_run();
}
