/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Listening sockets from "ADDR:PORT" or inherited descriptors. */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <gio/gio.h>
#include "net/qs-listen.h"

#define LISTEN_BACKLOG 128

gboolean qs_listen_parse_address(const char *spec, char **host, char **port,
                                 GError **error)
{
    const char *colon;

    if (spec[0] == '[') {
        const char *end = strchr(spec, ']');

        if (!end || end[1] != ':' || end[2] == '\0') {
            goto bad;
        }
        *host = g_strndup(spec + 1, (gsize)(end - spec - 1));
        *port = g_strdup(end + 2);
        return TRUE;
    }
    colon = strrchr(spec, ':');
    if (!colon || colon == spec || colon[1] == '\0' ||
        memchr(spec, ':', (gsize)(colon - spec))) {
        goto bad;
    }
    *host = g_strndup(spec, (gsize)(colon - spec));
    *port = g_strdup(colon + 1);
    return TRUE;
bad:
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "'%s' is not ADDR:PORT (IPv6 as [ADDR]:PORT)", spec);
    return FALSE;
}

static struct addrinfo *resolve(const char *spec, GError **error)
{
    g_autofree char *host = NULL;
    g_autofree char *port = NULL;
    struct addrinfo hints = {
        .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
        .ai_socktype = SOCK_STREAM,
    };
    struct addrinfo *res = NULL;
    int rc;

    if (!qs_listen_parse_address(spec, &host, &port, error)) {
        return NULL;
    }
    rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "%s: %s", spec,
                    gai_strerror(rc));
        return NULL;
    }
    return res;
}

int qs_listen_tcp(const char *spec, GError **error)
{
    struct addrinfo *res = resolve(spec, error);
    int saved = 0;

    if (!res) {
        return -1;
    }
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family,
                        ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                        ai->ai_protocol);

        if (fd < 0) {
            saved = errno;
            continue;
        }
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int){1}, sizeof(int));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
            listen(fd, LISTEN_BACKLOG) == 0) {
            freeaddrinfo(res);
            return fd;
        }
        saved = errno;
        close(fd);
    }
    freeaddrinfo(res);
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(saved),
                "listening on %s: %s", spec, g_strerror(saved));
    return -1;
}

gboolean qs_listen_adopt_fd(int fd, GError **error)
{
    int type = 0, listening = 0;
    socklen_t len = sizeof(int);
    int fl;

    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
        type != SOCK_STREAM) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "fd %d is not a stream socket", fd);
        return FALSE;
    }
    len = sizeof(int);
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) < 0 ||
        !listening) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "fd %d is not a listening socket", fd);
        return FALSE;
    }
    fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
        fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                    "fd %d: %s", fd, g_strerror(errno));
        return FALSE;
    }
    return TRUE;
}

guint16 qs_listen_get_port(int fd)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof(sa);

    if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
        return 0;
    }
    if (sa.ss_family == AF_INET) {
        return ntohs(((struct sockaddr_in *)&sa)->sin_port);
    }
    if (sa.ss_family == AF_INET6) {
        return ntohs(((struct sockaddr_in6 *)&sa)->sin6_port);
    }
    return 0;
}

static gboolean sockaddr_is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

        return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
    }
    return sa->sa_family == AF_UNIX;
}

gboolean qs_listen_spec_is_loopback(const char *spec)
{
    struct addrinfo *res = resolve(spec, NULL);
    gboolean loopback = res != NULL;

    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        loopback = loopback && sockaddr_is_loopback(ai->ai_addr);
    }
    if (res) {
        freeaddrinfo(res);
    }
    return loopback;
}

gboolean qs_listen_fd_is_loopback(int fd)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof(sa);

    return getsockname(fd, (struct sockaddr *)&sa, &len) == 0 &&
           sockaddr_is_loopback((struct sockaddr *)&sa);
}
