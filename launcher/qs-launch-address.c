/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Finding an address for the console's host. Debian maps the host's own
 * name to 127.0.1.1 in /etc/hosts, so the name is never what a client is
 * told, and a resolved name is not enough: loopback answers fall through to
 * the default route's address and the interfaces. */

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <unistd.h>
#include <net/if.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>
#include <gio/gio.h>
#include "qs-launch-address.h"

/* Not loopback, not link-local (useless to a proxy on another host). */
static gboolean usable(GInetAddress *a)
{
    return !g_inet_address_get_is_loopback(a) &&
           !g_inet_address_get_is_link_local(a) &&
           !g_inet_address_get_is_any(a);
}

static char *from_sockaddr(const struct sockaddr *sa, socklen_t len)
{
    g_autoptr(GSocketAddress) ga = g_socket_address_new_from_native(
        (gpointer)sa, len);

    if (!G_IS_INET_SOCKET_ADDRESS(ga) ||
        !usable(g_inet_socket_address_get_address(G_INET_SOCKET_ADDRESS(ga)))) {
        return NULL;
    }
    return g_inet_address_to_string(
        g_inet_socket_address_get_address(G_INET_SOCKET_ADDRESS(ga)));
}

static char *resolve(const char *host, int family)
{
    struct addrinfo hints = {
        .ai_family = family,
        .ai_socktype = SOCK_STREAM,
        .ai_flags = AI_ADDRCONFIG,
    };
    struct addrinfo *res = NULL;
    char *found = NULL;

    if (getaddrinfo(host, NULL, &hints, &res) != 0) {
        return NULL;
    }
    for (struct addrinfo *ai = res; ai && !found; ai = ai->ai_next) {
        found = from_sockaddr(ai->ai_addr, ai->ai_addrlen);
    }
    freeaddrinfo(res);
    return found;
}

/* The source address of the default route: a UDP socket "connected" to an
 * address of a documentation range (TEST-NET-3, 2001:db8::), which no
 * route but the default one covers, asks the routing table only (no packet
 * is sent); a host without a default route has none. */
static char *default_route_address(int family)
{
    struct sockaddr_storage dst = { 0 }, src;
    socklen_t len = sizeof(src);
    int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    char *found = NULL;

    if (fd < 0) {
        return NULL;
    }
    if (family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)&dst;

        in->sin_family = AF_INET;
        in->sin_port = htons(9);
        inet_pton(AF_INET, "203.0.113.1", &in->sin_addr);
    } else {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&dst;

        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(9);
        inet_pton(AF_INET6, "2001:db8::1", &in6->sin6_addr);
    }
    if (connect(fd, (struct sockaddr *)&dst, family == AF_INET ? sizeof(struct sockaddr_in)
                                                                : sizeof(struct sockaddr_in6)) == 0 &&
        getsockname(fd, (struct sockaddr *)&src, &len) == 0) {
        found = from_sockaddr((struct sockaddr *)&src, len);
    }
    close(fd);
    return found;
}

static char *first_interface_address(int family)
{
    struct ifaddrs *ifs = NULL;
    char *found = NULL;

    if (getifaddrs(&ifs) < 0) {
        return NULL;
    }
    for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || !(i->ifa_flags & IFF_UP) ||
            (i->ifa_addr->sa_family != AF_INET &&
             i->ifa_addr->sa_family != AF_INET6) ||
            (family != AF_UNSPEC && i->ifa_addr->sa_family != family)) {
            continue;
        }
        found = from_sockaddr(i->ifa_addr,
                              i->ifa_addr->sa_family == AF_INET
                                  ? sizeof(struct sockaddr_in)
                                  : sizeof(struct sockaddr_in6));
    }
    freeifaddrs(ifs);
    return found;
}

char *qs_console_address(const QsLaunchState *st, const char **from,
                         GError **error)
{
    g_autoptr(GInetAddress) listen = st->listen ?
        g_inet_address_new_from_string(st->listen) : NULL;
    /* A wildcard IPv4 listener serves IPv4 only; "::" serves both. */
    int family = listen && g_inet_address_get_family(listen) ==
                 G_SOCKET_FAMILY_IPV4 ? AF_INET : AF_UNSPEC;
    char *a;

    if (st->host && g_hostname_is_ip_address(st->host)) {
        *from = "the reported host, an address ([listen] host or address)";
        return g_strdup(st->host);
    }
    if (listen && !g_inet_address_get_is_any(listen)) {
        *from = "[listen] address";
        return g_strdup(st->listen);
    }
    if (st->host && (a = resolve(st->host, family))) {
        *from = "the reported host name, resolved";
        return a;
    }
    if ((a = default_route_address(AF_INET)) ||
        (family == AF_UNSPEC && (a = default_route_address(AF_INET6)))) {
        *from = "the address of the default route (the host name resolves only to loopback)";
        return a;
    }
    if (family == AF_UNSPEC && (a = first_interface_address(AF_INET))) {
        *from = "the first address of this host's interfaces (the host name "
                "resolves only to loopback)";
        return a;
    }
    if ((a = first_interface_address(family))) {
        *from = "the first address of this host's interfaces (the host name "
                "resolves only to loopback)";
        return a;
    }
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                "no address for '%s' but loopback, on no interface either: "
                "set [listen] host to the address clients connect to",
                st->host ? st->host : "");
    return NULL;
}

char *qs_reported_address(const QsLaunchConfig *cfg, const char **from)
{
    g_autoptr(GInetAddress) listen = g_inet_address_new_from_string(cfg->listen_address);
    gboolean v4 = g_inet_address_get_family(listen) == G_SOCKET_FAMILY_IPV4;
    char *a;

    if (!g_inet_address_get_is_any(listen)) {
        *from = cfg->listen_from;
        return g_strdup(cfg->listen_address);
    }
    if (cfg->public_address) {
        *from = "[listen] public-address";
        return g_strdup(cfg->public_address);
    }
    /* A wildcard IPv4 listener serves IPv4 only; "::" serves both. */
    if ((a = default_route_address(AF_INET)) || (!v4 && (a = default_route_address(AF_INET6)))) {
        *from = "the address of the default route";
        return a;
    }
    if ((a = first_interface_address(v4 ? AF_INET : AF_UNSPEC))) {
        *from = "the first address of this host's interfaces (no default route)";
        return a;
    }
    *from = "loopback: this host has no other address";
    return g_strdup(v4 ? "127.0.0.1" : "::1");
}
