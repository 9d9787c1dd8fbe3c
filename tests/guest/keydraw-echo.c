/* SPDX-License-Identifier: GPL-2.0-or-later */
/* keydraw.echo=NAME: echoes whatever arrives on the virtio-serial port NAME (or, with keydraw.echo_mode, never reads it, or floods it), and the port lookup the agent shares. */
#define _GNU_SOURCE
#include "keydraw.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ECHO_PORT_WAIT_S 60
#define ECHO_NAME_MAX 128

/* Every 256 KiB written in flood mode, one line. */
#define FLOOD_SAY (256u * 1024u)

static char echo_name[ECHO_NAME_MAX];
/* echo (default); hold: open the port and never read it; flood: write
 * a known byte stream (byte i is kd_flood_byte(i)) as fast as the host
 * takes it, never reading. */
static char echo_mode[16] = "echo";

int kd_vport_find(const char *port, char *dev, size_t len)
{
    DIR *d = opendir("/sys/class/virtio-ports");
    struct dirent *e;
    int found = 0;

    if (!d)
        return 0;
    while (!found && (e = readdir(d))) {
        char path[300], name[ECHO_NAME_MAX] = "";
        int fd;
        ssize_t n;

        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/sys/class/virtio-ports/%s/name", e->d_name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        n = read(fd, name, sizeof(name) - 1);
        close(fd);
        if (n <= 0)
            continue;
        name[n] = '\0';
        name[strcspn(name, "\n")] = '\0';
        if (strcmp(name, port) == 0) {
            snprintf(dev, len, "/dev/%s", e->d_name);
            found = 1;
        }
    }
    closedir(d);
    return found;
}

int kd_vport_wait(const char *port, char *dev, size_t len, int wait_s)
{
    struct timespec t0, now;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!kd_vport_find(port, dev, len)) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > wait_s)
            return 0;
        usleep(50 * 1000);
    }
    return 1;
}

/* Waits (without a bound: the host's end connects when the test says)
 * until the host side is connected; poll says POLLHUP until then. */
static int open_connected(const char *dev)
{
    for (;;) {
        int fd = open(dev, O_RDWR | O_CLOEXEC);
        struct pollfd pfd = { .fd = fd, .events = POLLOUT };

        if (fd >= 0) {
            if (poll(&pfd, 1, 200) == 1 && (pfd.revents & POLLOUT) &&
                !(pfd.revents & POLLHUP))
                return fd;
            close(fd);
        }
        usleep(100 * 1000);
    }
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static uint8_t flood_byte(unsigned long long i)
{
    return (uint8_t)(i * 7 + i / 251);
}

/* Writes until the host closes; one line per FLOOD_SAY bytes. */
static void flood(int fd)
{
    unsigned long long total = 0, said = 0;
    uint8_t buf[4096];

    for (;;) {
        for (size_t k = 0; k < sizeof(buf); k++)
            buf[k] = flood_byte(total + k);
        if (write_all(fd, buf, sizeof(buf)) < 0) {
            kd_say("ECHO flood-stopped n=%llu errno=%d", total, errno);
            return;
        }
        total += sizeof(buf);
        if (total - said >= FLOOD_SAY) {
            said = total;
            kd_say("ECHO flood n=%llu", total);
        }
    }
}

static void *echo_main(void *arg)
{
    char dev[300];

    (void)arg;
    kd_load_modules(2);             /* virtio_console, with the agent's group */
    if (!kd_vport_wait(echo_name, dev, sizeof(dev), ECHO_PORT_WAIT_S)) {
        kd_say("WARN echo port=%s not found", echo_name);
        return NULL;
    }
    kd_say("ECHO waiting port=%s dev=%s", echo_name, dev);
    for (;;) {
        int fd = open_connected(dev);
        unsigned long long total = 0;
        uint8_t buf[16384];

        kd_say("ECHO connected port=%s mode=%s", echo_name, echo_mode);
        if (strcmp(echo_mode, "hold") == 0) {
            for (;;)
                pause();
        }
        if (strcmp(echo_mode, "flood") == 0) {
            flood(fd);
            close(fd);
            usleep(100 * 1000);
            continue;
        }
        for (;;) {
            ssize_t n = read(fd, buf, sizeof(buf));

            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                kd_say("ECHO host-closed n=%llu errno=%d", total, n == 0 ? 0 : errno);
                break;
            }
            if (write_all(fd, buf, (size_t)n) < 0) {
                kd_say("ECHO write-failed n=%llu errno=%d", total, errno);
                break;
            }
            total += (unsigned long long)n;
            kd_say("ECHO n=%llu", total);
        }
        close(fd);
        usleep(100 * 1000);
    }
    return NULL;
}

void kd_echo_start(void)
{
    pthread_t t;

    if (!kd_cmdline_get("keydraw.echo", echo_name, sizeof(echo_name)) || !echo_name[0])
        return;
    kd_cmdline_get("keydraw.echo_mode", echo_mode, sizeof(echo_mode));
    if (pthread_create(&t, NULL, echo_main, NULL) != 0)
        kd_say("WARN echo thread errno=%d", errno);
    else
        pthread_detach(t);
}
