/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A TCP relay that delays every chunk by a fixed one-way time in each
 * direction, optionally paces each connection to a rate, and counts what
 * it forwards: the delay half of the benchmark rig's emulated link. */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "qs-relay.h"

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void die(const char *what)
{
    fprintf(stderr, "qs-delay-relay: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* Run fn(arg) with the calling thread in the network namespace at path,
 * so a socket made there stays bound to it after we switch back. */
static int in_netns(const char *path, int (*fn)(const struct sockaddr_in *),
                    const struct sockaddr_in *arg)
{
    if (!path)
        return fn(arg);
    int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    int target = open(path, O_RDONLY | O_CLOEXEC);
    if (home < 0 || target < 0)
        die(path);
    if (setns(target, CLONE_NEWNET) < 0)
        die("setns");
    int fd = fn(arg);
    int saved = errno;
    if (setns(home, CLONE_NEWNET) < 0)
        die("setns back");
    close(home);
    close(target);
    errno = saved;
    return fd;
}

static int make_listener(const struct sockaddr_in *addr)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (const struct sockaddr *)addr, sizeof(*addr)) < 0 ||
        listen(fd, 16) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int make_upstream(const struct sockaddr_in *addr)
{
    /* Blocking connect: the upstream is a local server, so this is quick,
     * and it keeps the loop free of half-open states. */
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

static bool parse_addr(const char *text, struct sockaddr_in *out)
{
    char host[64];
    const char *colon = strrchr(text, ':');
    if (!colon || (size_t)(colon - text) >= sizeof(host))
        return false;
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port < 0 || port > 65535)
        return false;
    memset(out, 0, sizeof(*out));
    out->sin_family = AF_INET;
    out->sin_port = htons((uint16_t)port);
    return inet_pton(AF_INET, host, &out->sin_addr) == 1;
}

static long parse_num(const char *opt, const char *text, long max)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || *end || v < 0 || v > max) {
        fprintf(stderr, "qs-delay-relay: bad value for %s: '%s'\n", opt, text);
        exit(2);
    }
    return v;
}

static void usage(FILE *to)
{
    fputs("usage: qs-delay-relay --listen ADDR:PORT --connect ADDR:PORT\n"
          "         [--listen-netns PATH] [--connect-netns PATH]\n"
          "         [--delay-ms N] [--rate-kbit N] [--burst-bytes N]\n"
          "         [--queue-bytes N] [--max-conns N]\n"
          "         [--upstream-rcvbuf N] [--downstream-sndbuf N]\n"
          "Relays each accepted connection to --connect, holding every chunk\n"
          "for --delay-ms (one way) in each direction. --rate-kbit paces each\n"
          "connection on its own (0: unpaced). SIGUSR1 prints a JSON line of\n"
          "per-connection counters on stdout; SIGTERM prints one and exits.\n",
          to);
}

static void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        die("fcntl");
}

/* Socket buffer sizes for the server-facing receive side and the
 * client-facing send side (0: the kernel's autotuning). */
static int upstream_rcvbuf, downstream_sndbuf;

static void accept_one(QsRelay *r, int lfd, const struct sockaddr_in *up,
                       const char *up_ns)
{
    int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (cfd < 0)
        return;
    if (r->n_conns >= r->max_conns) {
        fprintf(stderr, "qs-delay-relay: connection limit %d reached\n",
                r->max_conns);
        close(cfd);
        return;
    }
    int sfd = in_netns(up_ns, make_upstream, up);
    if (sfd < 0) {
        fprintf(stderr, "qs-delay-relay: upstream connect: %s\n",
                strerror(errno));
        r->refused++;
        close(cfd);
        return;
    }
    set_nonblock(sfd);
    if (upstream_rcvbuf > 0)
        setsockopt(sfd, SOL_SOCKET, SO_RCVBUF, &upstream_rcvbuf, sizeof(int));
    if (downstream_sndbuf > 0)
        setsockopt(cfd, SOL_SOCKET, SO_SNDBUF, &downstream_sndbuf, sizeof(int));
    int one = 1;
    setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(sfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    qs_relay_add_conn(r, cfd, sfd, now_us());
}

int main(int argc, char **argv)
{
    struct sockaddr_in listen_addr, up_addr;
    const char *listen_ns = NULL, *up_ns = NULL;
    bool have_listen = false, have_up = false;
    QsRelay r;
    qs_relay_init(&r);

    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            usage(stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            usage(stderr);
            return 2;
        }
        const char *v = argv[++i];
        if (!strcmp(o, "--listen"))
            have_listen = parse_addr(v, &listen_addr);
        else if (!strcmp(o, "--connect"))
            have_up = parse_addr(v, &up_addr);
        else if (!strcmp(o, "--listen-netns"))
            listen_ns = v;
        else if (!strcmp(o, "--connect-netns"))
            up_ns = v;
        else if (!strcmp(o, "--delay-ms"))
            r.delay_us = parse_num(o, v, 10000) * 1000;
        else if (!strcmp(o, "--rate-kbit"))
            r.rate_kbit = parse_num(o, v, 100000000);
        else if (!strcmp(o, "--burst-bytes"))
            r.burst_bytes = parse_num(o, v, 64L << 20);
        else if (!strcmp(o, "--queue-bytes"))
            r.queue_limit = parse_num(o, v, 256L << 20);
        else if (!strcmp(o, "--upstream-rcvbuf"))
            upstream_rcvbuf = (int)parse_num(o, v, 64L << 20);
        else if (!strcmp(o, "--downstream-sndbuf"))
            downstream_sndbuf = (int)parse_num(o, v, 64L << 20);
        else if (!strcmp(o, "--max-conns"))
            r.max_conns = (int)parse_num(o, v, QS_RELAY_MAX_CONNS);
        else {
            usage(stderr);
            return 2;
        }
    }
    if (!have_listen || !have_up || r.queue_limit < 1) {
        usage(stderr);
        return 2;
    }
    if (r.burst_bytes == 0)
        r.burst_bytes = 16 * 1024;

    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    int sfd_sig = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd_sig < 0)
        die("signalfd");

    int lfd = in_netns(listen_ns, make_listener, &listen_addr);
    if (lfd < 0)
        die("listen");
    struct sockaddr_in bound;
    socklen_t blen = sizeof(bound);
    getsockname(lfd, (struct sockaddr *)&bound, &blen);
    printf("{\"listening\":%u}\n", ntohs(bound.sin_port));
    fflush(stdout);

    for (;;) {
        struct pollfd pfds[2 + 2 * QS_RELAY_MAX_CONNS];
        pfds[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
        pfds[1] = (struct pollfd){ .fd = sfd_sig, .events = POLLIN };
        int64_t t = now_us();
        int nfds = 2;
        int timeout_ms = qs_relay_poll_setup(&r, pfds + 2, &nfds, t);
        nfds += 2;
        int n = poll(pfds, (nfds_t)nfds, timeout_ms);
        if (n < 0 && errno != EINTR)
            die("poll");
        t = now_us();
        if (n > 0 && (pfds[1].revents & POLLIN)) {
            struct signalfd_siginfo si;
            while (read(sfd_sig, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
                qs_relay_print_stats(&r, stdout, t);
                if (si.ssi_signo != SIGUSR1) {
                    qs_relay_free(&r);
                    close(lfd);
                    close(sfd_sig);
                    return 0;
                }
            }
        }
        if (n > 0)
            qs_relay_service(&r, pfds + 2, t);
        if (n > 0 && (pfds[0].revents & POLLIN))
            accept_one(&r, lfd, &up_addr, up_ns);
    }
}
