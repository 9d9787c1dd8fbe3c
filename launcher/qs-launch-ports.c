/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Connecting to the sockets of the domain's virtio-serial ports before the helper starts, since the confined helper opens nothing itself. */
#include "qs-launch-ports.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "qs-launch-log.h"

static int connect_unix(const char *path, GError **error)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd;

    if (strlen(path) >= sizeof(sa.sun_path)) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NAMETOOLONG,
                    "socket path too long");
        return -1;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        int e = errno;

        if (fd >= 0) {
            close(fd);
        }
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "%s",
                    g_strerror(e));
        return -1;
    }
    return fd;
}

guint qs_launch_open_ports(const QsDomainInfo *info, QsSpawnPort *out)
{
    guint n = 0;

    for (guint i = 0; info->ports && i < info->ports->len; i++) {
        const QsDomainPort *port = g_ptr_array_index(info->ports, i);
        g_autoptr(GError) error = NULL;
        const char *why = NULL;
        int fd;

        if (!qs_domain_port_usable(port, &why)) {
            qs_log_info("port %s not passed to the helper: %s", port->name, why);
            continue;
        }
        if (n == QS_SPAWN_MAX_PORTS) {
            qs_log_info("port %s not passed to the helper: it takes at most %d ports",
                        port->name, QS_SPAWN_MAX_PORTS);
            continue;
        }
        if ((fd = connect_unix(port->path, &error)) < 0) {
            qs_log_error("port %s: connecting to its chardev socket %s: %s; "
                         "the console is served without it", port->name,
                         port->path, error->message);
            continue;
        }
        /* The name points into info, which outlives the spawn. */
        out[n++] = (QsSpawnPort){ port->name, fd };
    }
    return n;
}

void qs_launch_close_ports(QsSpawnPort *ports, guint n)
{
    for (guint i = 0; i < n; i++) {
        close(ports[i].fd);
    }
}
