/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsControl against a real GDBus client in this process: calls reach the
 * ops, their errors reach the caller under the names the interface file
 * documents, Leaving reaches peers, peers are bounded, and what is served is
 * the interface generated from org.qemuspice.Helper1.xml. */
#include <glib/gstdio.h>
#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "control/qs-control.h"
#include "control-fake.h"
#include "qs-dbus-helper1.h"

typedef struct {
    char *dir;
    char *path;
    ControlFake fake;
    QsControl *ctl;
} Fixture;

static int bind_at(const char *path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpuint(strlen(path), <, sizeof(sa.sun_path));
    strcpy(sa.sun_path, path);
    g_assert_cmpint(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
    g_assert_cmpint(listen(fd, 8), ==, 0);
    return fd;
}

static void setup(Fixture *fx, gconstpointer data)
{
    g_autoptr(GError) error = NULL;

    (void)data;
    fx->dir = g_dir_make_tmp("qs-control-XXXXXX", &error);
    g_assert_no_error(error);
    fx->path = g_build_filename(fx->dir, "ctl", NULL);
    fx->ctl = qs_control_new(bind_at(fx->path), &control_fake_ops, &fx->fake,
                             &error);
    g_assert_no_error(error);
    g_assert_nonnull(fx->ctl);
}

static void teardown(Fixture *fx, gconstpointer data)
{
    (void)data;
    qs_control_free(fx->ctl);
    g_unlink(fx->path);
    g_rmdir(fx->dir);
    g_free(fx->path);
    g_free(fx->dir);
    control_fake_clear(&fx->fake);
}

/* The server runs in this thread's context: every client step spins it. */
typedef struct {
    GObject *obj;
    GError *error;
    gboolean done;
} Wait;

static void on_conn(GObject *src, GAsyncResult *res, gpointer data)
{
    Wait *w = data;

    (void)src;
    w->obj = G_OBJECT(g_dbus_connection_new_for_address_finish(res,
                                                               &w->error));
    w->done = TRUE;
}

static GDBusConnection *connect_peer(Fixture *fx, GError **error)
{
    g_autofree char *addr = g_strconcat("unix:path=", fx->path, NULL);
    Wait w = { 0 };
    gint64 deadline = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;

    g_dbus_connection_new_for_address(addr,
        G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT, NULL, NULL, on_conn,
        &w);
    while (!w.done && g_get_monotonic_time() < deadline) {
        g_main_context_iteration(NULL, FALSE) || (g_usleep(1000), 0);
    }
    g_assert_true(w.done);
    if (w.error) {
        g_propagate_error(error, w.error);
    }
    return (GDBusConnection *)w.obj;
}

static void on_reply(GObject *src, GAsyncResult *res, gpointer data)
{
    Wait *w = data;

    w->obj = (GObject *)g_dbus_connection_call_finish(G_DBUS_CONNECTION(src),
                                                     res, &w->error);
    w->done = TRUE;
}

/* Returns the reply (a GVariant, cast) or NULL with *error set. */
static GVariant *call_iface(GDBusConnection *c, const char *iface,
                            const char *method, GVariant *args,
                            GError **error)
{
    Wait w = { 0 };
    gint64 deadline = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;

    g_dbus_connection_call(c, NULL, QS_CONTROL_PATH, iface,
                           method, args, NULL, G_DBUS_CALL_FLAGS_NONE, 5000,
                           NULL, on_reply, &w);
    while (!w.done && g_get_monotonic_time() < deadline) {
        g_main_context_iteration(NULL, FALSE) || (g_usleep(1000), 0);
    }
    g_assert_true(w.done);
    if (w.error) {
        g_propagate_error(error, w.error);
    }
    return (GVariant *)w.obj;
}

static GVariant *call(GDBusConnection *c, const char *method, GVariant *args,
                      GError **error)
{
    return call_iface(c, QS_CONTROL_INTERFACE, method, args, error);
}

static GVariant *set_certificates(GDBusConnection *c, const guint8 *cert,
                                  gsize cert_len, const guint8 *key,
                                  gsize key_len, GError **error)
{
    return call(c, "SetCertificates",
                g_variant_new("(@ay@ay)",
                    g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, cert,
                                              cert_len, 1),
                    g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, key,
                                              key_len, 1)),
                error);
}

static void test_set_ticket(Fixture *fx, gconstpointer data)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GDBusConnection) c = connect_peer(fx, &error);
    g_autoptr(GVariant) r = NULL;
    guint kept = 99;

    (void)data;
    g_assert_no_error(error);
    fx->fake.clients = 1;
    r = call(c, "SetTicket", g_variant_new("(sxb)", "s3cret", (gint64)1700000000,
                                           FALSE), &error);
    g_assert_no_error(error);
    g_variant_get(r, "(u)", &kept);
    g_assert_cmpuint(kept, ==, 1);
    g_assert_cmpstr(fx->fake.password, ==, "s3cret");
    g_assert_cmpint(fx->fake.expiry_us, ==, (gint64)1700000000 * G_USEC_PER_SEC);
    g_clear_pointer(&r, g_variant_unref);

    r = call(c, "SetTicket", g_variant_new("(sxb)", "other", (gint64)0, TRUE),
             &error);
    g_assert_no_error(error);
    g_variant_get(r, "(u)", &kept);
    g_assert_cmpuint(kept, ==, 0);
    g_assert_true(fx->fake.disconnect);
    g_assert_cmpint(fx->fake.expiry_us, ==, 0);
    g_clear_pointer(&r, g_variant_unref);

    /* the op's refusal and a bad expiry are errors the caller sees */
    r = call(c, "SetTicket", g_variant_new("(sxb)", "", (gint64)0, FALSE),
             &error);
    g_assert_null(r);
    g_assert_true(error && strstr(error->message, "empty password"));
    g_clear_error(&error);
    r = call(c, "SetTicket", g_variant_new("(sxb)", "x", (gint64)-5, FALSE),
             &error);
    g_assert_null(r);
    g_assert_true(error && strstr(error->message, "expiry"));
    g_assert_cmpstr(fx->fake.password, ==, "other");
}

/* SetViewTicket passes its password and expiry on ("" removes it); the
 * op's refusal and a bad expiry reach the caller. */
static void test_set_view_ticket(Fixture *fx, gconstpointer data)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GDBusConnection) c = connect_peer(fx, &error);
    g_autoptr(GVariant) r = NULL;

    (void)data;
    g_assert_no_error(error);
    r = call(c, "SetTicket", g_variant_new("(sxb)", "ctl", (gint64)0, FALSE), &error);
    g_assert_no_error(error);
    g_clear_pointer(&r, g_variant_unref);
    r = call(c, "SetViewTicket", g_variant_new("(sx)", "look", (gint64)1700000000), &error);
    g_assert_no_error(error);
    g_assert_cmpstr(fx->fake.view_password, ==, "look");
    g_assert_cmpint(fx->fake.view_expiry_us, ==, (gint64)1700000000 * G_USEC_PER_SEC);
    g_clear_pointer(&r, g_variant_unref);
    r = call(c, "SetViewTicket", g_variant_new("(sx)", "", (gint64)0), &error);
    g_assert_no_error(error);
    g_assert_cmpstr(fx->fake.view_password, ==, "");
    g_clear_pointer(&r, g_variant_unref);
    r = call(c, "SetViewTicket", g_variant_new("(sx)", "ctl", (gint64)0), &error);
    g_assert_null(r);
    g_assert_true(error && strstr(error->message, "must differ"));
    g_clear_error(&error);
    r = call(c, "SetViewTicket", g_variant_new("(sx)", "x", (gint64)-1), &error);
    g_assert_null(r);
    g_assert_true(error && strstr(error->message, "expiry"));
    g_assert_cmpstr(fx->fake.view_password, ==, "");
}

/* DisconnectClient ends one client; an address nobody has is NOT_FOUND. */
static void test_disconnect_client(Fixture *fx, gconstpointer data)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GDBusConnection) c = connect_peer(fx, &error);
    g_autoptr(GVariant) r = NULL;

    (void)data;
    g_assert_no_error(error);
    fx->fake.clients = 2;
    r = call(c, "DisconnectClient", g_variant_new("(s)", "127.0.0.1:5000"), &error);
    g_assert_no_error(error);
    g_assert_cmpuint(fx->fake.clients, ==, 1);
    g_clear_pointer(&r, g_variant_unref);
    r = call(c, "DisconnectClient", g_variant_new("(s)", "10.0.0.1:1"), &error);
    g_assert_null(r);
    g_assert_true(g_error_matches(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND) ||
                  (error && strstr(error->message, "no such client")));
    g_assert_cmpuint(fx->fake.clients, ==, 1);
}

static void on_fd_reply(GObject *src, GAsyncResult *res, gpointer data)
{
    Wait *w = data;

    w->obj = (GObject *)g_dbus_connection_call_with_unix_fd_list_finish(
        G_DBUS_CONNECTION(src), NULL, res, &w->error);
    w->done = TRUE;
}

/* AddClient with `fd` (not passed if < 0) as the handle's descriptor. */
static GVariant *add_client(GDBusConnection *c, int fd, gboolean skipauth, gboolean tls,
                            GError **error)
{
    g_autoptr(GUnixFDList) fds = fd >= 0 ? g_unix_fd_list_new() : NULL;
    Wait w = { 0 };
    gint64 deadline = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;

    if (fds) {
        g_assert_cmpint(g_unix_fd_list_append(fds, fd, NULL), ==, 0);
    }
    g_dbus_connection_call_with_unix_fd_list(c, NULL, QS_CONTROL_PATH, QS_CONTROL_INTERFACE,
                                             "AddClient",
                                             g_variant_new("(hbb)", 0, skipauth, tls), NULL,
                                             G_DBUS_CALL_FLAGS_NONE, 5000, fds, NULL,
                                             on_fd_reply, &w);
    while (!w.done && g_get_monotonic_time() < deadline) {
        g_main_context_iteration(NULL, FALSE) || (g_usleep(1000), 0);
    }
    g_assert_true(w.done);
    if (w.error) {
        g_propagate_error(error, w.error);
    }
    return (GVariant *)w.obj;
}

/* AddClient hands the op a descriptor of its own with the flags; the op's
 * refusal reaches the caller; a call without a descriptor is refused
 * before the op. */
static void test_add_client(Fixture *fx, gconstpointer data)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GDBusConnection) c = connect_peer(fx, &error);
    g_autoptr(GVariant) r = NULL;
    int sv[2];

    (void)data;
    g_assert_no_error(error);
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
    r = add_client(c, sv[1], TRUE, FALSE, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(fx->fake.added, ==, 1);
    g_assert_true(fx->fake.added_was_socket);
    g_assert_true(fx->fake.added_skipauth);
    g_assert_false(fx->fake.added_tls);
    g_clear_pointer(&r, g_variant_unref);
    r = add_client(c, sv[1], FALSE, TRUE, &error);
    g_assert_null(r);
    g_assert_true(g_error_matches(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED));
    g_assert_nonnull(strstr(error->message, "no TLS listener"));
    g_clear_error(&error);
    r = add_client(c, -1, FALSE, FALSE, &error);
    g_assert_null(r);
    g_assert_true(g_error_matches(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT));
    g_assert_nonnull(strstr(error->message, "no descriptor"));
    g_assert_cmpuint(fx->fake.added, ==, 1);
    close(sv[0]);
    close(sv[1]);
}

static void test_certificates_and_status(Fixture *fx, gconstpointer data)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GDBusConnection) c = connect_peer(fx, &error);
    g_autoptr(GVariant) r = NULL;
    g_autoptr(GVariant) st = NULL;
    g_autoptr(GVariant) clients = NULL;
    const guint8 cert[20] = { 1 }, key[12] = { 2 };
    gint64 started = 0;

    (void)data;
    g_assert_no_error(error);
    r = set_certificates(c, cert, 20, key, 12, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(fx->fake.cert_len, ==, 20);
    g_assert_cmpuint(fx->fake.key_len, ==, 12);
    g_clear_pointer(&r, g_variant_unref);
    r = set_certificates(c, cert, 20, key, 3, &error);
    g_assert_null(r);
    g_assert_true(error && strstr(error->message, "bad key"));
    g_clear_error(&error);

    fx->fake.clients = 1;
    r = call(c, "GetStatus", NULL, &error);
    g_assert_no_error(error);
    st = g_variant_get_child_value(r, 0);
    g_assert_true(g_variant_lookup(st, "started", "x", &started));
    g_assert_cmpint(ABS(started - g_get_real_time() / G_USEC_PER_SEC), <, 60);
    clients = g_variant_lookup_value(st, "clients", G_VARIANT_TYPE("aa{sv}"));
    g_assert_nonnull(clients);
    g_assert_cmpuint(g_variant_n_children(clients), ==, 1);
}

static void on_leaving(GDBusConnection *c, const char *sender,
                       const char *path, const char *iface, const char *name,
                       GVariant *params, gpointer data)
{
    char **reason = data;

    (void)c, (void)sender, (void)path, (void)iface, (void)name;
    g_variant_get(params, "(s)", reason);
}

static void test_leaving(Fixture *fx, gconstpointer data)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GDBusConnection) c = connect_peer(fx, &error);
    g_autoptr(GVariant) r = NULL;
    g_autofree char *reason = NULL;
    gint64 deadline;

    (void)data;
    g_assert_no_error(error);
    g_dbus_connection_signal_subscribe(c, NULL, QS_CONTROL_INTERFACE,
                                       "Leaving", QS_CONTROL_PATH, NULL,
                                       G_DBUS_SIGNAL_FLAGS_NONE, on_leaving,
                                       &reason, NULL);
    /* a round trip, so the server has the peer registered */
    r = call(c, "GetStatus", NULL, &error);
    g_assert_no_error(error);
    qs_control_leaving(fx->ctl, "qemu went away");
    deadline = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
    while (!reason && g_get_monotonic_time() < deadline) {
        g_main_context_iteration(NULL, FALSE) || (g_usleep(1000), 0);
    }
    g_assert_cmpstr(reason, ==, "qemu went away");
}

static void test_peer_bound(Fixture *fx, gconstpointer data)
{
    GDBusConnection *peers[QS_CONTROL_MAX_PEERS] = { NULL };
    g_autoptr(GError) error = NULL;
    g_autoptr(GDBusConnection) extra = NULL;

    (void)data;
    for (guint i = 0; i < QS_CONTROL_MAX_PEERS; i++) {
        g_autoptr(GVariant) r = NULL;

        peers[i] = connect_peer(fx, &error);
        g_assert_no_error(error);
        r = call(peers[i], "GetStatus", NULL, &error);
        g_assert_no_error(error);
    }
    extra = connect_peer(fx, &error);
    g_assert_null(extra);
    g_assert_nonnull(error);
    g_clear_error(&error);
    /* one leaves: there is room again */
    g_dbus_connection_close_sync(peers[0], NULL, NULL);
    g_clear_object(&peers[0]);
    for (int i = 0; i < 50; i++) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(2000);
    }
    extra = connect_peer(fx, &error);
    g_assert_no_error(error);
    g_assert_nonnull(extra);
    for (guint i = 1; i < QS_CONTROL_MAX_PEERS; i++) {
        g_object_unref(peers[i]);
    }
}

/* GIO errors have no D-Bus names, so GDBus sends them under these; the
 * interface file documents them and clients may match on them. */
#define IO_ERROR_NAME "org.gtk.GDBus.UnmappedGError.Quark._g_2dio_2derror_2dquark.Code"

static void assert_remote(GError *error, int code)
{
    g_autofree char *name = NULL;
    g_autofree char *want = g_strdup_printf(IO_ERROR_NAME "%d", code);

    g_assert_nonnull(error);
    name = g_dbus_error_get_remote_error(error);
    g_assert_cmpstr(name, ==, want);
    g_assert_true(g_error_matches(error, G_IO_ERROR, code));
}

static void test_error_names(Fixture *fx, gconstpointer data)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GDBusConnection) c = connect_peer(fx, &error);
    g_autoptr(GVariant) r = NULL;
    const guint8 cert[20] = { 1 }, key[3] = { 2 };

    (void)data;
    g_assert_no_error(error);
    r = call(c, "SetTicket", g_variant_new("(sxb)", "x", (gint64)-5, FALSE),
             &error);
    g_assert_null(r);
    assert_remote(error, G_IO_ERROR_INVALID_ARGUMENT);
    g_clear_error(&error);
    r = set_certificates(c, cert, 20, key, 3, &error);
    g_assert_null(r);
    assert_remote(error, G_IO_ERROR_INVALID_DATA);
    g_clear_error(&error);
    /* a wrong signature never reaches the helper */
    r = call(c, "SetTicket", g_variant_new("(sx)", "x", (gint64)0), &error);
    g_assert_null(r);
    g_assert_true(g_error_matches(error, G_DBUS_ERROR,
                                  G_DBUS_ERROR_INVALID_ARGS));
}

static void assert_args_equal(GDBusArgInfo **a, GDBusArgInfo **b)
{
    guint i;

    for (i = 0; a && a[i]; i++) {
        g_assert_nonnull(b);
        g_assert_nonnull(b[i]);
        g_assert_cmpstr(a[i]->signature, ==, b[i]->signature);
        g_assert_cmpstr(a[i]->name, ==, b[i]->name);
    }
    g_assert_true(!b || !b[i]);
}

/* The helper's introspection data is the generated interface, member for
 * member, under the name and path the launcher calls. */
static void test_served_from_xml(Fixture *fx, gconstpointer data)
{
    GDBusInterfaceInfo *want = (GDBusInterfaceInfo *)
        qs_dbus_helper1_interface_info();
    g_autoptr(GError) error = NULL;
    g_autoptr(GDBusConnection) c = connect_peer(fx, &error);
    g_autoptr(GVariant) r = NULL;
    g_autoptr(GDBusNodeInfo) node = NULL;
    GDBusInterfaceInfo *got;
    const char *xml;
    guint i;

    (void)data;
    g_assert_no_error(error);
    g_assert_cmpstr(want->name, ==, QS_CONTROL_INTERFACE);
    r = call_iface(c, "org.freedesktop.DBus.Introspectable", "Introspect",
                   NULL, &error);
    g_assert_no_error(error);
    g_variant_get(r, "(&s)", &xml);
    node = g_dbus_node_info_new_for_xml(xml, &error);
    g_assert_no_error(error);
    got = g_dbus_node_info_lookup_interface(node, QS_CONTROL_INTERFACE);
    g_assert_nonnull(got);
    for (i = 0; want->methods[i]; i++) {
        GDBusMethodInfo *m = g_dbus_interface_info_lookup_method(got,
            want->methods[i]->name);

        g_assert_nonnull(m);
        assert_args_equal(want->methods[i]->in_args, m->in_args);
        assert_args_equal(want->methods[i]->out_args, m->out_args);
    }
    g_assert_null(got->methods[i]);
    for (i = 0; want->signals[i]; i++) {
        GDBusSignalInfo *s = g_dbus_interface_info_lookup_signal(got,
            want->signals[i]->name);

        g_assert_nonnull(s);
        assert_args_equal(want->signals[i]->args, s->args);
    }
    g_assert_null(got->signals[i]);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add("/control/set-ticket", Fixture, NULL, setup, test_set_ticket,
               teardown);
    g_test_add("/control/set-view-ticket", Fixture, NULL, setup, test_set_view_ticket,
               teardown);
    g_test_add("/control/disconnect-client", Fixture, NULL, setup, test_disconnect_client,
               teardown);
    g_test_add("/control/add-client", Fixture, NULL, setup, test_add_client, teardown);
    g_test_add("/control/certificates-and-status", Fixture, NULL, setup,
               test_certificates_and_status, teardown);
    g_test_add("/control/leaving", Fixture, NULL, setup, test_leaving,
               teardown);
    g_test_add("/control/peer-bound", Fixture, NULL, setup, test_peer_bound,
               teardown);
    g_test_add("/control/error-names", Fixture, NULL, setup,
               test_error_names, teardown);
    g_test_add("/control/served-from-xml", Fixture, NULL, setup,
               test_served_from_xml, teardown);
    return g_test_run();
}
