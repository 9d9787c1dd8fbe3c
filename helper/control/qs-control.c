/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The helper's control surface: org.qemuspice.Helper1 served to the launcher
 * on connections accepted from a socket it bound and passed in, and in bus
 * mode under a well-known name on the VM's own bus (as libvirt reaches
 * qemu-rdp). The
 * interface is the skeleton generated from org.qemuspice.Helper1.xml, one
 * object exported on every peer's connection, its handlers set in the
 * generated interface's vtable so the compiler checks their types. */
#include "control/qs-control.h"

#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <string.h>
#include <unistd.h>

#include "qs-dbus-helper1.h"

#define LEAVING_FLUSH_US (200 * 1000)

struct QsControl {
    const QsControlOps *ops;
    gpointer data;
    GSocketService *service;
    QsDBusHelper1 *iface;       /* a QsControlObject, exported on every peer */
    GDBusAuthObserver *observer;
    char *guid;
    GPtrArray *peers;           /* GDBusConnection, authenticated */
    guint pending;              /* handshakes under way */
    /* Handshakes hold it, not the QsControl, which may go first: its
     * "ctl" data is cleared then. */
    GCancellable *cancel;
    gint64 started_us;
    GDBusConnection *bus;       /* the VM's bus, or NULL */
    guint bus_name_id;
};

/* The generated skeleton with our handlers in its interface vtable. */
G_DECLARE_FINAL_TYPE(QsControlObject, qs_control_object, QS, CONTROL_OBJECT,
                     QsDBusHelper1Skeleton)

struct _QsControlObject {
    QsDBusHelper1Skeleton parent;
    QsControl *ctl;
};

static void qs_control_object_iface_init(QsDBusHelper1Iface *iface);

G_DEFINE_TYPE_WITH_CODE(QsControlObject, qs_control_object,
                        QS_DBUS_TYPE_HELPER1_SKELETON,
                        G_IMPLEMENT_INTERFACE(QS_DBUS_TYPE_HELPER1,
                                              qs_control_object_iface_init))

static void qs_control_object_class_init(QsControlObjectClass *klass)
{
    (void)klass;
}

static void qs_control_object_init(QsControlObject *obj)
{
    (void)obj;
}

/* Root (the launcher) or whoever we run as now: the helper may have changed
 * uid since the peer connected, so this is asked at accept and again when
 * D-Bus authenticates it. */
static gboolean uid_allowed(uid_t uid)
{
    return uid == 0 || uid == geteuid();
}

static gboolean on_allow_mechanism(GDBusAuthObserver *observer,
                                   const char *mechanism, gpointer data)
{
    (void)observer, (void)data;
    /* EXTERNAL is checked by the kernel; the cookie mechanism would need
     * files a confined helper cannot open. */
    return strcmp(mechanism, "EXTERNAL") == 0;
}

static gboolean on_authorize_peer(GDBusAuthObserver *observer,
                                  GIOStream *stream, GCredentials *creds,
                                  gpointer data)
{
    (void)observer, (void)stream, (void)data;
    return creds && uid_allowed(g_credentials_get_unix_user(creds, NULL));
}

static gboolean on_set_ticket(QsDBusHelper1 *iface,
                              GDBusMethodInvocation *inv,
                              const char *password, gint64 expiry,
                              gboolean disconnect)
{
    QsControl *ctl = QS_CONTROL_OBJECT(iface)->ctl;
    g_autoptr(GError) error = NULL;
    guint kept = 0;

    /* The ticket's expiry is kept in microseconds. */
    if (expiry < 0 || expiry > G_MAXINT64 / G_USEC_PER_SEC) {
        g_dbus_method_invocation_return_error(inv, G_IO_ERROR,
            G_IO_ERROR_INVALID_ARGUMENT,
            "expiry must be 0 (never) or seconds since the epoch");
        return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
    if (!ctl->ops->set_ticket(password, strlen(password),
                              expiry * G_USEC_PER_SEC, disconnect, &kept,
                              ctl->data, &error)) {
        g_dbus_method_invocation_return_gerror(inv, error);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
    qs_dbus_helper1_complete_set_ticket(iface, inv, kept);
    return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean on_set_view_ticket(QsDBusHelper1 *iface, GDBusMethodInvocation *inv,
                                   const char *password, gint64 expiry)
{
    QsControl *ctl = QS_CONTROL_OBJECT(iface)->ctl;
    g_autoptr(GError) error = NULL;

    if (expiry < 0 || expiry > G_MAXINT64 / G_USEC_PER_SEC) {
        g_dbus_method_invocation_return_error(inv, G_IO_ERROR,
            G_IO_ERROR_INVALID_ARGUMENT,
            "expiry must be 0 (never) or seconds since the epoch");
        return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
    if (!ctl->ops->set_view_ticket(password, strlen(password), expiry * G_USEC_PER_SEC,
                                   ctl->data, &error)) {
        g_dbus_method_invocation_return_gerror(inv, error);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
    qs_dbus_helper1_complete_set_view_ticket(iface, inv);
    return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean on_set_token_keys(QsDBusHelper1 *iface, GDBusMethodInvocation *inv,
                                  GVariant *keys)
{
    QsControl *ctl = QS_CONTROL_OBJECT(iface)->ctl;
    g_autoptr(GError) error = NULL;
    gsize len;
    const char *text = g_variant_get_fixed_array(keys, &len, 1);

    if (len > 4096) {
        g_dbus_method_invocation_return_error(inv, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                                              "token keys: more than 4096 bytes");
        return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
    if (!ctl->ops->set_token_keys(text, len, ctl->data, &error)) {
        g_dbus_method_invocation_return_gerror(inv, error);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
    qs_dbus_helper1_complete_set_token_keys(iface, inv);
    return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean on_add_client(QsDBusHelper1 *iface, GDBusMethodInvocation *inv,
                              GUnixFDList *fds, GVariant *socket, gboolean skipauth,
                              gboolean tls)
{
    QsControl *ctl = QS_CONTROL_OBJECT(iface)->ctl;
    g_autoptr(GError) error = NULL;
    gint32 index = g_variant_get_handle(socket);
    int fd;

    /* The list's descriptors are its own; ours is a CLOEXEC duplicate. */
    if (!fds || index < 0 || index >= g_unix_fd_list_get_length(fds)) {
        g_dbus_method_invocation_return_error(inv, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                                              "AddClient: the call carries no descriptor "
                                              "for its socket argument");
        return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
    if ((fd = g_unix_fd_list_get(fds, index, &error)) < 0 ||
        !ctl->ops->add_client(fd, skipauth, tls, ctl->data, &error)) {
        g_prefix_error(&error, "AddClient: ");
        g_dbus_method_invocation_return_gerror(inv, error);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
    qs_dbus_helper1_complete_add_client(iface, inv, NULL);
    return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean on_disconnect_client(QsDBusHelper1 *iface, GDBusMethodInvocation *inv,
                                     const char *address)
{
    QsControl *ctl = QS_CONTROL_OBJECT(iface)->ctl;
    g_autoptr(GError) error = NULL;

    if (!ctl->ops->disconnect_client(address, ctl->data, &error)) {
        g_dbus_method_invocation_return_gerror(inv, error);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
    qs_dbus_helper1_complete_disconnect_client(iface, inv);
    return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean on_set_certificates(QsDBusHelper1 *iface,
                                    GDBusMethodInvocation *inv,
                                    GVariant *cert, GVariant *key)
{
    QsControl *ctl = QS_CONTROL_OBJECT(iface)->ctl;
    g_autoptr(GError) error = NULL;
    gsize cert_len, key_len;
    const guint8 *c = g_variant_get_fixed_array(cert, &cert_len, 1);
    const guint8 *k = g_variant_get_fixed_array(key, &key_len, 1);

    if (!ctl->ops->set_certificates(c, cert_len, k, key_len, ctl->data,
                                    &error)) {
        g_dbus_method_invocation_return_gerror(inv, error);
        return G_DBUS_METHOD_INVOCATION_HANDLED;
    }
    qs_dbus_helper1_complete_set_certificates(iface, inv);
    return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean on_get_status(QsDBusHelper1 *iface,
                              GDBusMethodInvocation *inv)
{
    QsControl *ctl = QS_CONTROL_OBJECT(iface)->ctl;
    GVariantBuilder b;

    g_variant_builder_init(&b, G_VARIANT_TYPE_VARDICT);
    g_variant_builder_add(&b, "{sv}", "version",
                          g_variant_new_string(QS_VERSION));
    g_variant_builder_add(&b, "{sv}", "pid",
                          g_variant_new_uint32((guint32)getpid()));
    g_variant_builder_add(&b, "{sv}", "started",
                          g_variant_new_int64(ctl->started_us /
                                              G_USEC_PER_SEC));
    g_variant_builder_add(&b, "{sv}", "clients",
                          ctl->ops->list_clients(ctl->data));
    qs_dbus_helper1_complete_get_status(iface, inv,
                                        g_variant_builder_end(&b));
    return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static void qs_control_object_iface_init(QsDBusHelper1Iface *iface)
{
    iface->handle_set_ticket = on_set_ticket;
    iface->handle_set_view_ticket = on_set_view_ticket;
    iface->handle_set_token_keys = on_set_token_keys;
    iface->handle_add_client = on_add_client;
    iface->handle_disconnect_client = on_disconnect_client;
    iface->handle_set_certificates = on_set_certificates;
    iface->handle_get_status = on_get_status;
}

static void on_peer_closed(GDBusConnection *conn, gboolean remote,
                           GError *error, gpointer data)
{
    QsControl *ctl = data;

    (void)remote, (void)error;
    g_dbus_interface_skeleton_unexport_from_connection(
        G_DBUS_INTERFACE_SKELETON(ctl->iface), conn);
    g_ptr_array_remove(ctl->peers, conn);
}

static void on_peer_ready(GObject *source, GAsyncResult *res, gpointer data)
{
    g_autoptr(GCancellable) cancel = data;
    QsControl *ctl = g_object_get_data(G_OBJECT(cancel), "ctl");
    g_autoptr(GError) error = NULL;
    g_autoptr(GDBusConnection) conn = g_dbus_connection_new_finish(res, &error);

    (void)source;
    if (!ctl) {
        if (conn) {
            g_dbus_connection_close(conn, NULL, NULL, NULL);
        }
        return;
    }
    ctl->pending--;
    if (!conn) {
        g_message("control: a peer failed to authenticate: %s",
                  error->message);
        return;
    }
    if (!g_dbus_interface_skeleton_export(
            G_DBUS_INTERFACE_SKELETON(ctl->iface), conn, QS_CONTROL_PATH,
            &error)) {
        g_warning("control: %s", error->message);
        g_dbus_connection_close(conn, NULL, NULL, NULL);
        return;
    }
    g_signal_connect(conn, "closed", G_CALLBACK(on_peer_closed), ctl);
    g_ptr_array_add(ctl->peers, g_object_ref(conn));
    g_dbus_connection_start_message_processing(conn);
}

static gboolean on_incoming(GSocketService *service, GSocketConnection *sc,
                            GObject *source, gpointer data)
{
    QsControl *ctl = data;
    g_autoptr(GCredentials) creds = NULL;
    g_autoptr(GError) error = NULL;
    uid_t uid;

    (void)service, (void)source;
    creds = g_socket_get_credentials(g_socket_connection_get_socket(sc),
                                     &error);
    uid = creds ? g_credentials_get_unix_user(creds, NULL) : (uid_t)-1;
    if (!creds || !uid_allowed(uid)) {
        g_message("control: refused a peer (uid %d)", (int)uid);
        return TRUE;    /* dropping our reference closes it */
    }
    if (ctl->peers->len + ctl->pending >= QS_CONTROL_MAX_PEERS) {
        g_message("control: refused a peer: %u already connected",
                  QS_CONTROL_MAX_PEERS);
        return TRUE;
    }
    ctl->pending++;
    g_dbus_connection_new(G_IO_STREAM(sc), ctl->guid,
                          G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_SERVER |
                          G_DBUS_CONNECTION_FLAGS_DELAY_MESSAGE_PROCESSING,
                          ctl->observer, ctl->cancel, on_peer_ready,
                          g_object_ref(ctl->cancel));
    return TRUE;
}

QsControl *qs_control_new(int listen_fd, const QsControlOps *ops,
                          gpointer data, GError **error)
{
    g_autoptr(QsControl) ctl = g_new0(QsControl, 1);
    g_autoptr(GSocket) sock = NULL;

    ctl->ops = ops;
    ctl->data = data;
    ctl->started_us = g_get_real_time();
    ctl->peers = g_ptr_array_new_with_free_func(g_object_unref);
    ctl->guid = g_dbus_generate_guid();
    ctl->cancel = g_cancellable_new();
    g_object_set_data(G_OBJECT(ctl->cancel), "ctl", ctl);
    ctl->iface = g_object_new(qs_control_object_get_type(), NULL);
    QS_CONTROL_OBJECT(ctl->iface)->ctl = ctl;
    if (listen_fd < 0) {
        return g_steal_pointer(&ctl);   /* the VM's bus only */
    }
    sock = g_socket_new_from_fd(listen_fd, error);
    if (!sock) {
        g_prefix_error(error, "--control-fd %d: ", listen_fd);
        return NULL;
    }
    if (g_socket_get_family(sock) != G_SOCKET_FAMILY_UNIX) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "--control-fd %d is not a Unix socket", listen_fd);
        return NULL;
    }
    ctl->observer = g_dbus_auth_observer_new();
    g_signal_connect(ctl->observer, "allow-mechanism",
                     G_CALLBACK(on_allow_mechanism), ctl);
    g_signal_connect(ctl->observer, "authorize-authenticated-peer",
                     G_CALLBACK(on_authorize_peer), ctl);
    ctl->service = g_socket_service_new();
    if (!g_socket_listener_add_socket(G_SOCKET_LISTENER(ctl->service), sock,
                                      NULL, error)) {
        g_prefix_error(error, "--control-fd %d: ", listen_fd);
        return NULL;
    }
    g_signal_connect(ctl->service, "incoming", G_CALLBACK(on_incoming), ctl);
    g_socket_service_start(ctl->service);
    return g_steal_pointer(&ctl);
}

static void on_bus_name_acquired(GDBusConnection *bus, const char *name,
                                 gpointer data)
{
    (void)bus, (void)data;
    g_message("control: %s on the VM's bus", name);
}

static void on_bus_name_lost(GDBusConnection *bus, const char *name,
                             gpointer data)
{
    (void)data;
    if (bus) {
        g_warning("control: the name %s on the VM's bus is taken or was "
                  "lost (another helper of this VM?): the control interface "
                  "is not reachable there", name);
    }
}

gboolean qs_control_serve_on_bus(QsControl *ctl, GDBusConnection *bus,
                                 GError **error)
{
    g_return_val_if_fail(ctl->bus == NULL, FALSE);
    if (!g_dbus_interface_skeleton_export(G_DBUS_INTERFACE_SKELETON(ctl->iface),
                                          bus, QS_CONTROL_PATH, error)) {
        g_prefix_error(error, "control on the VM's bus: ");
        return FALSE;
    }
    ctl->bus = g_object_ref(bus);
    /* Not queued: a second helper of the VM (another --console) says so at
     * once instead of waiting for the first to go. */
    ctl->bus_name_id = g_bus_own_name_on_connection(
        bus, QS_CONTROL_BUS_NAME, G_BUS_NAME_OWNER_FLAGS_DO_NOT_QUEUE,
        on_bus_name_acquired, on_bus_name_lost, NULL, NULL);
    return TRUE;
}

/* Flushes hold it, so a flush that outlives qs_control_leaving() finds it. */
typedef struct {
    guint left;
} Flushes;

static void on_flushed(GObject *source, GAsyncResult *res, gpointer data)
{
    Flushes *f = data;

    g_dbus_connection_flush_finish(G_DBUS_CONNECTION(source), res, NULL);
    f->left--;
    g_rc_box_release(f);
}

void qs_control_leaving(QsControl *ctl, const char *reason)
{
    gint64 deadline = g_get_monotonic_time() + LEAVING_FLUSH_US;
    Flushes *f = g_rc_box_new0(Flushes);

    /* Queued on every connection the skeleton is exported on, that is
     * every peer and the VM's bus; the flushes below push it out. */
    qs_dbus_helper1_emit_leaving(ctl->iface, reason);
    for (guint i = 0; i <= ctl->peers->len; i++) {
        GDBusConnection *c = i < ctl->peers->len ? ctl->peers->pdata[i]
                                                 : ctl->bus;

        if (c) {
            f->left++;
            g_dbus_connection_flush(c, NULL, on_flushed, g_rc_box_acquire(f));
        }
    }
    /* A peer that does not read gets no more than the deadline. */
    while (f->left > 0 && g_get_monotonic_time() < deadline) {
        if (!g_main_context_iteration(NULL, FALSE)) {
            g_usleep(2000);
        }
    }
    g_rc_box_release(f);
}

void qs_control_free(QsControl *ctl)
{
    if (!ctl) {
        return;
    }
    if (ctl->service) {
        g_socket_service_stop(ctl->service);
        g_socket_listener_close(G_SOCKET_LISTENER(ctl->service));
        g_signal_handlers_disconnect_by_data(ctl->service, ctl);
        g_object_unref(ctl->service);
    }
    for (guint i = 0; ctl->peers && i < ctl->peers->len; i++) {
        GDBusConnection *c = ctl->peers->pdata[i];

        g_signal_handlers_disconnect_by_data(c, ctl);
        g_dbus_interface_skeleton_unexport_from_connection(
            G_DBUS_INTERFACE_SKELETON(ctl->iface), c);
        g_dbus_connection_close(c, NULL, NULL, NULL);
    }
    if (ctl->bus) {
        g_clear_handle_id(&ctl->bus_name_id, g_bus_unown_name);
        g_dbus_interface_skeleton_unexport_from_connection(
            G_DBUS_INTERFACE_SKELETON(ctl->iface), ctl->bus);
        g_clear_object(&ctl->bus);
    }
    if (ctl->iface) {
        QS_CONTROL_OBJECT(ctl->iface)->ctl = NULL;
        g_clear_object(&ctl->iface);
    }
    g_clear_pointer(&ctl->peers, g_ptr_array_unref);
    if (ctl->cancel) {
        g_object_set_data(G_OBJECT(ctl->cancel), "ctl", NULL);
        g_cancellable_cancel(ctl->cancel);
        g_object_unref(ctl->cancel);
    }
    g_clear_object(&ctl->observer);
    g_free(ctl->guid);
    g_free(ctl);
}
