/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Connecting to the sockets of the domain's virtio-serial ports, listening on its usb-redir devices' sockets, and either for its passthrough smartcard, before the helper starts, since the confined helper opens nothing itself. */
#include "qs-launch-ports.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
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
        out[n++] = (QsSpawnPort){ port->name, fd, FALSE, FALSE };
    }
    return n;
}

void qs_launch_close_ports(QsSpawnPort *ports, guint n)
{
    for (guint i = 0; i < n; i++) {
        close(ports[i].fd);
    }
}

/* A fresh listening socket at `path`, mode 0660, owned by the user and
 * group qemu runs as when libvirt says (its DAC label; uid -1 leaves the
 * launcher's own): qemu connects as that user. */
static int listen_unix(const char *path, gint64 uid, gint64 gid, GError **error)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    struct stat st;
    int fd, e;

    if (strlen(path) >= sizeof(sa.sun_path)) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NAMETOOLONG,
                    "socket path too long");
        return -1;
    }
    if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
                    "something other than a socket is there; left alone");
        return -1;
    }
    /* A previous helper's socket: qemu reconnects to the new one. */
    unlink(path);
    memcpy(sa.sun_path, path, strlen(path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        (uid >= 0 && chown(path, (uid_t)uid, (gid_t)gid) < 0) ||
        chmod(path, 0660) < 0 || listen(fd, 4) < 0) {
        e = errno;
        if (fd >= 0) {
            close(fd);
        }
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "%s",
                    g_strerror(e));
        return -1;
    }
    return fd;
}

guint qs_launch_open_redirdevs(const QsDomainInfo *info, QsSpawnPort *out, guint n)
{
    guint taken = 0;

    for (guint i = 0; info->redirdevs && i < info->redirdevs->len; i++) {
        const QsDomainPort *dev = g_ptr_array_index(info->redirdevs, i);
        g_autoptr(GError) error = NULL;
        const char *why = NULL;
        int fd;

        if (!qs_domain_redirdev_usable(dev, &why)) {
            qs_log_info("usb-redir device %s (%s) not passed to the helper: %s",
                        dev->name, dev->path, why);
            continue;
        }
        if (taken == QS_SPAWN_MAX_USBREDIR) {
            qs_log_info("usb-redir device %s not passed to the helper: it takes at "
                        "most %d", dev->name, QS_SPAWN_MAX_USBREDIR);
            continue;
        }
        if ((fd = listen_unix(dev->path, info->qemu_uid, info->qemu_gid, &error)) < 0) {
            qs_log_error("usb-redir device %s: listening on %s: %s; the console is "
                         "served without it", dev->name, dev->path, error->message);
            continue;
        }
        out[n + taken++] = (QsSpawnPort){ dev->name, fd, TRUE, FALSE };
    }
    return n + taken;
}

guint qs_launch_open_smartcard(const QsDomainInfo *info, QsSpawnPort *out, guint n)
{
    const QsDomainPort *card = info->smartcard;
    g_autoptr(GError) error = NULL;
    int fd;

    if (info->extra_smartcards) {
        qs_log_info("%u more passthrough smartcard(s) not passed to the helper: it offers "
                    "one reader", info->extra_smartcards);
    }
    if (!card) {
        return n;
    }
    /* Either way round: the helper's bridge keeps one connection. */
    fd = card->qemu_listens ? connect_unix(card->path, &error)
                            : listen_unix(card->path, info->qemu_uid, info->qemu_gid, &error);
    if (fd < 0) {
        qs_log_error("smartcard: %s %s: %s; the console is served without it",
                     card->qemu_listens ? "connecting to" : "listening on", card->path,
                     error->message);
        return n;
    }
    out[n] = (QsSpawnPort){ card->name, fd, FALSE, TRUE };
    return n + 1;
}
