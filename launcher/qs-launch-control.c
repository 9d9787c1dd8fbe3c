/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The launcher's side of the helper's control surface: bind its socket,
 * connect to it with a deadline, call it through the proxy generated from
 * the interface's XML (helper/control/org.qemuspice.Helper1.xml). */
#include "qs-launch-control.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "qs-dbus-helper1.h"

#define CONTROL_PATH "/org/qemuspice/Helper1"
#define PEM_MAX (256 * 1024)

int qs_control_bind(const char *path, GError **error)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    mode_t old_mask;
    int fd, r;

    if (strlen(path) >= sizeof(sa.sun_path)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FILENAME_TOO_LONG,
                    "control socket path too long: %s", path);
        return -1;
    }
    strcpy(sa.sun_path, path);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                    "control socket: %s", g_strerror(errno));
        return -1;
    }
    unlink(path);   /* a previous launcher's, under our lock */
    /* Only root may connect: the file is 0600 from its creation on. */
    old_mask = umask(0177);
    r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
    umask(old_mask);
    if (r < 0 || listen(fd, 4) < 0) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                    "control socket %s: %s", path, g_strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

typedef struct {
    GMainLoop *loop;
    GDBusConnection *conn;
    GError *error;
} Connecting;

static void on_connected(GObject *source, GAsyncResult *res, gpointer data)
{
    Connecting *c = data;

    (void)source;
    c->conn = g_dbus_connection_new_for_address_finish(res, &c->error);
    g_main_loop_quit(c->loop);
}

static gboolean on_connect_timeout(gpointer data)
{
    g_cancellable_cancel(data);
    return G_SOURCE_REMOVE;
}

GDBusConnection *qs_control_connect(const char *path, GError **error)
{
    g_autoptr(GMainContext) ctx = g_main_context_new();
    g_autoptr(GCancellable) cancel = g_cancellable_new();
    g_autofree char *escaped = g_dbus_address_escape_value(path);
    g_autofree char *address = g_strconcat("unix:path=", escaped, NULL);
    g_autoptr(GSource) timeout = g_timeout_source_new(QS_CONTROL_TIMEOUT_MS);
    Connecting c = { g_main_loop_new(ctx, FALSE), NULL, NULL };

    /* A helper that accepts but never answers must not hang the command:
     * the handshake runs in a private context with a deadline. */
    g_main_context_push_thread_default(ctx);
    g_source_set_callback(timeout, on_connect_timeout, cancel, NULL);
    g_source_attach(timeout, ctx);
    g_dbus_connection_new_for_address(address,
        G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT, NULL, cancel,
        on_connected, &c);
    g_main_loop_run(c.loop);
    g_source_destroy(timeout);
    g_main_context_pop_thread_default(ctx);
    g_main_loop_unref(c.loop);
    if (!c.conn) {
        if (g_error_matches(c.error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
            g_clear_error(&c.error);
            g_set_error(&c.error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                        "no answer in %d ms", QS_CONTROL_TIMEOUT_MS);
        }
        g_propagate_prefixed_error(error, c.error, "the helper's control "
                                   "socket %s: ", path);
        return NULL;
    }
    return c.conn;
}

/* A local object: with no bus name, no properties to load and no signals
 * to follow, making it sends nothing. */
static QsDBusHelper1 *helper1(GDBusConnection *conn, GError **error)
{
    QsDBusHelper1 *proxy = qs_dbus_helper1_proxy_new_sync(conn,
        G_DBUS_PROXY_FLAGS_DO_NOT_LOAD_PROPERTIES |
        G_DBUS_PROXY_FLAGS_DO_NOT_CONNECT_SIGNALS |
        G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START,
        NULL, CONTROL_PATH, NULL, error);

    if (proxy) {
        g_dbus_proxy_set_default_timeout(G_DBUS_PROXY(proxy),
                                         QS_CONTROL_TIMEOUT_MS);
    }
    return proxy;
}

/* The helper's message, named by the method that failed. */
static gboolean failed(const char *method, GError **error)
{
    if (error && *error) {
        g_dbus_error_strip_remote_error(*error);
        g_prefix_error(error, "%s: ", method);
    }
    return FALSE;
}

gboolean qs_control_set_ticket(GDBusConnection *conn, const char *password,
                               gint64 expiry, gboolean disconnect,
                               guint *kept, GError **error)
{
    g_autoptr(QsDBusHelper1) proxy = helper1(conn, error);

    if (!proxy ||
        !qs_dbus_helper1_call_set_ticket_sync(proxy, password, expiry,
                                              disconnect, kept, NULL,
                                              error)) {
        return failed("SetTicket", error);
    }
    return TRUE;
}

gboolean qs_control_disconnect_client(GDBusConnection *conn, const char *address,
                                      GError **error)
{
    g_autoptr(QsDBusHelper1) proxy = helper1(conn, error);

    if (!proxy ||
        !qs_dbus_helper1_call_disconnect_client_sync(proxy, address, NULL, error)) {
        return failed("DisconnectClient", error);
    }
    return TRUE;
}

gboolean qs_control_set_view_ticket(GDBusConnection *conn, const char *password,
                                    gint64 expiry, GError **error)
{
    g_autoptr(QsDBusHelper1) proxy = helper1(conn, error);

    if (!proxy ||
        !qs_dbus_helper1_call_set_view_ticket_sync(proxy, password, expiry, NULL, error)) {
        return failed("SetViewTicket", error);
    }
    return TRUE;
}

gboolean qs_control_set_token_keys(GDBusConnection *conn, const char *text,
                                   GError **error)
{
    g_autoptr(QsDBusHelper1) proxy = helper1(conn, error);

    if (!proxy ||
        !qs_dbus_helper1_call_set_token_keys_sync(
            proxy, g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, text, strlen(text), 1),
            NULL, error)) {
        return failed("SetTokenKeys", error);
    }
    return TRUE;
}

typedef struct {
    char *text;
    gsize len;
} Pem;

/* The key's bytes are wiped, not just freed, once the call has sent them. */
static void pem_free(gpointer data)
{
    Pem *pem = data;

    explicit_bzero(pem->text, pem->len);
    g_free(pem->text);
    g_free(pem);
}

static GVariant *pem_bytes(const char *dir, const char *name, GError **error)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    char *text = NULL;
    gsize len = 0;
    Pem *pem;

    if (!g_file_get_contents(path, &text, &len, error)) {
        return NULL;
    }
    pem = g_new(Pem, 1);
    pem->text = text;
    pem->len = len;
    if (len == 0 || len > PEM_MAX) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "%s: %zu bytes (1 to %d expected)", path, len, PEM_MAX);
        pem_free(pem);
        return NULL;
    }
    return g_variant_new_from_data(G_VARIANT_TYPE_BYTESTRING, text, len,
                                   TRUE, pem_free, pem);
}

gboolean qs_control_set_certificates(GDBusConnection *conn, const char *dir,
                                     GError **error)
{
    g_autoptr(QsDBusHelper1) proxy = helper1(conn, error);
    GVariant *cert = proxy ? pem_bytes(dir, "server-cert.pem", error) : NULL;
    GVariant *key = cert ? pem_bytes(dir, "server-key.pem", error) : NULL;

    if (!key) {
        if (cert) {
            g_variant_unref(g_variant_ref_sink(cert));
        }
        return FALSE;
    }
    /* The call takes the floating cert and key (and so wipes them). */
    if (!qs_dbus_helper1_call_set_certificates_sync(proxy, cert, key, NULL,
                                                    error)) {
        return failed("SetCertificates", error);
    }
    return TRUE;
}

GVariant *qs_control_get_status(GDBusConnection *conn, GError **error)
{
    g_autoptr(QsDBusHelper1) proxy = helper1(conn, error);
    GVariant *status = NULL;

    if (!proxy ||
        !qs_dbus_helper1_call_get_status_sync(proxy, &status, NULL, error)) {
        failed("GetStatus", error);
        return NULL;
    }
    return status;
}
