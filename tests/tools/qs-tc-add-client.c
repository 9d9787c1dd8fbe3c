/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Channels on sockets handed to the server through qemu-spice's
 * org.qemuspice.Helper1.AddClient, as virt-viewer gets them from
 * virDomainOpenGraphicsFD: spice-gtk asks for a socket per channel (its
 * open-fd signal, with whether TLS is wanted), we make a socket pair, pass
 * one end with AddClient and give spice-gtk the other. */
#include <errno.h>
#include <gio/gunixfdlist.h>
#include <sys/socket.h>
#include <unistd.h>

#include "qs-tc.h"

#define HELPER_NAME "org.qemuspice.Helper1"
#define HELPER_PATH "/org/qemuspice/Helper1"
#define CALL_TIMEOUT_MS 10000

gboolean qs_tc_add_client_open(QsTc *tc, const char *address, gboolean bus, gboolean skipauth,
                               GError **error)
{
    GDBusConnectionFlags flags = G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT;

    if (bus) {
        flags |= G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION;
    }
    tc->control = g_dbus_connection_new_for_address_sync(address, flags, NULL, NULL, error);
    if (!tc->control) {
        g_prefix_error(error, "--add-client %s: ", address);
        return FALSE;
    }
    tc->control_bus = bus;
    tc->skipauth = skipauth;
    return TRUE;
}

static void on_open_fd(SpiceChannel *channel, gint with_tls, gpointer data)
{
    QsTc *tc = data;
    g_autoptr(GUnixFDList) fds = g_unix_fd_list_new();
    g_autoptr(GVariant) reply = NULL;
    g_autoptr(GError) error = NULL;
    int type = 0, id = 0, sv[2];

    g_object_get(channel, "channel-type", &type, "channel-id", &id, NULL);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        qs_tc_fail(tc, QS_TC_EXIT_INTERNAL, "socketpair: %s", g_strerror(errno));
        return;
    }
    if (g_unix_fd_list_append(fds, sv[1], &error) >= 0) {
        reply = g_dbus_connection_call_with_unix_fd_list_sync(
            tc->control, tc->control_bus ? HELPER_NAME : NULL, HELPER_PATH, HELPER_NAME,
            "AddClient", g_variant_new("(hbb)", 0, tc->skipauth, with_tls != 0), NULL,
            G_DBUS_CALL_FLAGS_NONE, CALL_TIMEOUT_MS, fds, NULL, NULL, &error);
    }
    close(sv[1]);
    if (!reply) {
        close(sv[0]);
        g_dbus_error_strip_remote_error(error);
        qs_tc_fail(tc, QS_TC_EXIT_CONNECT, "AddClient (channel %s:%d%s): %s",
                   qs_tc_channel_name(type), id, with_tls ? ", TLS" : "", error->message);
        return;
    }
    tc->n_added++;
    if (tc->verbose) {
        g_printerr("channel %s:%d: socket added%s\n", qs_tc_channel_name(type), id,
                   with_tls ? " (TLS)" : "");
    }
    if (!spice_channel_open_fd(channel, sv[0])) {
        qs_tc_fail(tc, QS_TC_EXIT_CONNECT, "spice_channel_open_fd refused channel %s:%d",
                   qs_tc_channel_name(type), id);
    }
}

void qs_tc_add_client_watch(QsTc *tc, SpiceChannel *channel)
{
    if (tc->control) {
        g_signal_connect(channel, "open-fd", G_CALLBACK(on_open_fd), tc);
    }
}
