/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsListenerArrivals: the bytes of qemu's calls that wait for the listener's thread, and the watchdog's wake. */
#include "display/qs-listener-arrivals.h"

#include <sys/ioctl.h>

/* Counted per message on top of its body, so empty calls count too. */
#define MESSAGE_OVERHEAD 64

/* Shared by GDBus's worker thread, the listener's thread and the main
 * thread, through atomics. */
struct QsListenerArrivals {
    guint64 queued_bytes;   /* counted on arrival, minus handled */
    gint armed;             /* make `wake` ready at the next arrival */
    gint probing;           /* look at the socket after each arrival */
    gint emptied;           /* the socket was found empty after one */
    GSource *wake;          /* the watchdog's, or NULL */
    GSocket *socket;        /* the watched connection's; set before its first arrival */
#ifdef QS_TEST_CONTROLS
    gint slow_ms;
    gint64 slow_until_us;
#endif
};

static void arrivals_clear(gpointer data)
{
    QsListenerArrivals *a = data;

    if (a->wake) {
        g_source_unref(a->wake);
    }
    g_clear_object(&a->socket);
}

QsListenerArrivals *qs_listener_arrivals_new(GSource *wake)
{
    QsListenerArrivals *a = g_atomic_rc_box_new0(QsListenerArrivals);

    a->wake = wake ? g_source_ref(wake) : NULL;
    return a;
}

void qs_listener_arrivals_unref(QsListenerArrivals *a)
{
    g_atomic_rc_box_release_full(a, arrivals_clear);
}

static void release(gpointer data)
{
    qs_listener_arrivals_unref(data);
}

static uint64_t message_cost(GDBusMessage *msg)
{
    GVariant *body = g_dbus_message_get_body(msg);

    return MESSAGE_OVERHEAD + (body ? g_variant_get_size(body) : 0);
}

/* The calls our handlers complete, with their signatures: exactly these are
 * counted on arrival and uncounted in the handler, so the count cannot leak
 * (a call GDBus refuses before the handler is not counted). */
static gboolean is_counted(GDBusMessage *msg)
{
    static const struct {
        const char *iface, *member, *sig;
    } calls[] = {
        { QS_IFACE_LISTENER, "Scanout", "(uuuuay)" },
        { QS_IFACE_LISTENER, "Update", "(iiiiuuay)" },
        { QS_IFACE_LISTENER, "ScanoutDMABUF", "(huuuutb)" },
        { QS_IFACE_LISTENER, "UpdateDMABUF", "(iiii)" },
        { QS_IFACE_LISTENER, "Disable", "()" },
        { QS_IFACE_LISTENER, "MouseSet", "(iii)" },
        { QS_IFACE_LISTENER, "CursorDefine", "(iiiiay)" },
        { QS_IFACE_LISTENER_MAP, "ScanoutMap", "(huuuuu)" },
        { QS_IFACE_LISTENER_MAP, "UpdateMap", "(iiii)" },
    };
    const char *iface = g_dbus_message_get_interface(msg);
    const char *member = g_dbus_message_get_member(msg);
    const char *path = g_dbus_message_get_path(msg);
    GVariant *body = g_dbus_message_get_body(msg);
    const char *sig = body ? g_variant_get_type_string(body) : "()";

    if (g_dbus_message_get_message_type(msg) != G_DBUS_MESSAGE_TYPE_METHOD_CALL ||
        !iface || !member || g_strcmp0(path, QS_LISTENER_PATH) != 0) {
        return FALSE;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(calls); i++) {
        if (g_str_equal(iface, calls[i].iface) &&
            g_str_equal(member, calls[i].member) &&
            g_str_equal(sig, calls[i].sig)) {
            return TRUE;
        }
    }
    return FALSE;
}

/* GDBus worker thread. The count is raised before `armed` is read, and
 * qs_listener_arrivals_arm() sets `armed` before its caller reads the
 * count: one of the two sees the other, so no arrival is missed.
 * (g_source_set_ready_time is thread-safe, and harmless on a source the
 * main thread has destroyed, which our reference keeps allocated.) */
static GDBusMessage *on_filter(GDBusConnection *conn, GDBusMessage *msg,
                               gboolean incoming, gpointer user_data)
{
    QsListenerArrivals *a = user_data;

    (void)conn;
    if (incoming && is_counted(msg)) {
        g_atomic_pointer_add(&a->queued_bytes, (gssize)message_cost(msg));
        if (a->wake && g_atomic_int_compare_and_exchange(&a->armed, 1, 0)) {
            g_source_set_ready_time(a->wake, 0);
        }
#ifdef QS_TEST_CONTROLS
        if (g_get_monotonic_time() < g_atomic_pointer_get(&a->slow_until_us)) {
            g_usleep((gulong)g_atomic_int_get(&a->slow_ms) * 1000);
        }
#endif
        if (a->socket && g_atomic_int_get(&a->probing)) {
            int unread = 0;

            if (ioctl(g_socket_get_fd(a->socket), FIONREAD, &unread) == 0 && unread == 0) {
                g_atomic_int_set(&a->probing, 0);
                g_atomic_int_set(&a->emptied, 1);
            }
        }
    }
    return msg;
}

guint qs_listener_arrivals_watch(QsListenerArrivals *a, GDBusConnection *conn)
{
    GIOStream *stream = g_dbus_connection_get_stream(conn);

    /* Not a socket (no other kind is made here): never probed, so the
     * watchdog judges by its samples alone. */
    if (G_IS_SOCKET_CONNECTION(stream)) {
        a->socket = g_object_ref(g_socket_connection_get_socket(G_SOCKET_CONNECTION(stream)));
    }
    return g_dbus_connection_add_filter(conn, on_filter, g_atomic_rc_box_acquire(a),
                                        release);
}

void qs_listener_arrivals_probe_emptying(QsListenerArrivals *a)
{
    g_atomic_int_set(&a->probing, 1);
}

gboolean qs_listener_arrivals_take_emptied(QsListenerArrivals *a)
{
    return g_atomic_int_compare_and_exchange(&a->emptied, 1, 0);
}

void qs_listener_arrivals_handled(QsListenerArrivals *a, GDBusMethodInvocation *inv)
{
    GDBusMessage *msg = g_dbus_method_invocation_get_message(inv);

    g_atomic_pointer_add(&a->queued_bytes, -(gssize)message_cost(msg));
}

uint64_t qs_listener_arrivals_get_queued(QsListenerArrivals *a)
{
    return g_atomic_pointer_get(&a->queued_bytes);
}

void qs_listener_arrivals_arm(QsListenerArrivals *a)
{
    g_atomic_int_set(&a->armed, 1);
}

void qs_listener_arrivals_disarm(QsListenerArrivals *a)
{
    g_atomic_int_set(&a->armed, 0);
}

#ifdef QS_TEST_CONTROLS
void qs_listener_arrivals_slow_reader(QsListenerArrivals *a, unsigned ms, unsigned seconds)
{
    g_atomic_int_set(&a->slow_ms, (gint)ms);
    g_atomic_pointer_set(&a->slow_until_us,
                         g_get_monotonic_time() + (gint64)seconds * G_USEC_PER_SEC);
}
#endif
