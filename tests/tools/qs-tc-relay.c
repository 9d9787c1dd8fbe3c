/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A relay in qs-test-client that strips display caps from the link, as a proxy forwarding none would. */
#include "qs-tc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/*
 * spice-gtk has no way to withdraw a capability it announces (LZ4 is set
 * whenever it was built with lz4), so the client links through this relay:
 * it listens on 127.0.0.1, connects each accepted socket to the server,
 * rewrites the display channel's SpiceLinkMess (clearing the chosen bits of
 * its channel caps) and then copies bytes both ways unchanged. The server
 * sees what it would behind a proxy that passes fewer caps on. Plain SPICE
 * only: the link message of a TLS channel cannot be read here.
 */

#define LINK_HEADER_SIZE 16u
#define LINK_MESS_SIZE 18u
#define LINK_MAX_BODY 4096u             /* what spice-server accepts */

typedef struct {
    char *host, *port;
    guint32 clear_mask;                 /* display channel caps word 0 bits */
    int listen_fd;
} Relay;

typedef struct {
    const Relay *relay;
    int client_fd;
} Conn;

static guint32 get_le32(const guint8 *p)
{
    return (guint32)p[0] | (guint32)p[1] << 8 | (guint32)p[2] << 16 | (guint32)p[3] << 24;
}

static void put_le32(guint8 *p, guint32 v)
{
    p[0] = (guint8)v;
    p[1] = (guint8)(v >> 8);
    p[2] = (guint8)(v >> 16);
    p[3] = (guint8)(v >> 24);
}

static gboolean read_all(int fd, guint8 *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = read(fd, buf, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return FALSE;
        buf += n;
        len -= (size_t)n;
    }
    return TRUE;
}

static gboolean write_all(int fd, const guint8 *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return FALSE;
        buf += n;
        len -= (size_t)n;
    }
    return TRUE;
}

static int connect_server(const Relay *relay)
{
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
    int fd = -1;

    if (getaddrinfo(relay->host, relay->port, &hints, &res) != 0)
        return -1;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

/* The first client message: SpiceLinkHeader, SpiceLinkMess and its caps.
 * A display link loses the relay's bits; anything malformed is passed on
 * as it came, for the server to judge. */
static gboolean relay_link(const Relay *relay, int from, int to)
{
    guint8 head[LINK_HEADER_SIZE];
    g_autofree guint8 *body = NULL;
    guint32 size;

    if (!read_all(from, head, sizeof(head)))
        return FALSE;
    size = get_le32(head + 12);
    if (size > LINK_MAX_BODY)
        return write_all(to, head, sizeof(head));
    body = g_malloc(size);
    if (!read_all(from, body, size))
        return FALSE;
    if (size >= LINK_MESS_SIZE && body[4] == SPICE_CHANNEL_DISPLAY) {
        guint32 n_common = get_le32(body + 6), n_channel = get_le32(body + 10);
        guint32 offset = get_le32(body + 14);
        guint64 at = (guint64)offset + (guint64)n_common * 4;

        if (n_channel > 0 && at + 4 <= size)
            put_le32(body + at, get_le32(body + at) & ~relay->clear_mask);
    }
    return write_all(to, head, sizeof(head)) && write_all(to, body, size);
}

static void pump(int a, int b)
{
    guint8 buf[64 * 1024];
    struct pollfd fds[2] = { { .fd = a, .events = POLLIN }, { .fd = b, .events = POLLIN } };

    for (;;) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        for (int i = 0; i < 2; i++) {
            if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
                ssize_t n = read(fds[i].fd, buf, sizeof(buf));

                if (n <= 0 || !write_all(fds[1 - i].fd, buf, (size_t)n))
                    return;
            }
        }
    }
}

static gpointer conn_thread(gpointer data)
{
    Conn *c = data;
    int server = connect_server(c->relay);

    if (server >= 0 && relay_link(c->relay, c->client_fd, server))
        pump(c->client_fd, server);
    if (server >= 0)
        close(server);
    close(c->client_fd);
    g_free(c);
    return NULL;
}

static gpointer accept_thread(gpointer data)
{
    Relay *relay = data;

    for (;;) {
        int fd = accept4(relay->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        Conn *c;

        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return NULL;
        }
        c = g_new0(Conn, 1);
        c->relay = relay;
        c->client_fd = fd;
        g_thread_unref(g_thread_new("qs-tc-relay-conn", conn_thread, c));
    }
}

char *qs_tc_relay_start(const char *host, const char *port, guint32 clear_display_caps,
                        GError **error)
{
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(addr);
    Relay *relay;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
        listen(fd, 16) != 0 || getsockname(fd, (struct sockaddr *)&addr, &len) != 0) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                    "caps relay: cannot listen on 127.0.0.1: %s", g_strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    /* Lives as long as the process: the client is short-lived. */
    relay = g_new0(Relay, 1);
    relay->host = g_strdup(host);
    relay->port = g_strdup(port);
    relay->clear_mask = clear_display_caps;
    relay->listen_fd = fd;
    g_thread_unref(g_thread_new("qs-tc-relay", accept_thread, relay));
    return g_strdup_printf("%u", ntohs(addr.sin_port));
}
