/* SPDX-License-Identifier: GPL-2.0-or-later */
/* PID 1 chores of the test guest: file systems, console, modules, cmdline. */
#define _GNU_SOURCE
#include "keydraw.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int console_fd = -1;

/* One write() per line so that lines of the two threads never interleave. */
void kd_say(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof(line) - 2)
        n = sizeof(line) - 2;
    line[n++] = '\n';
    if (console_fd >= 0 && write(console_fd, line, n) < 0) {
        /* nowhere left to report it */
    }
}

/* PID 1 must not exit (the kernel would panic and hang): power off instead,
 * which ends qemu when it runs with -no-reboot or without a reboot action. */
void kd_fail(const char *fmt, ...)
{
    char msg[400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    kd_say("FAIL %s", msg);
    sync();
    reboot(RB_POWER_OFF);
    for (;;)
        pause();
}

static void mount_or_warn(const char *src, const char *dst, const char *type)
{
    mkdir(dst, 0755);
    if (mount(src, dst, type, MS_NOSUID, NULL) < 0 && errno != EBUSY)
        kd_say("WARN mount=%s errno=%d", dst, errno);
}

static void open_console(void)
{
    /* console=ttyS0 makes /dev/console the serial port; ttyS0 is a fallback
     * for a command line without console=. */
    console_fd = open("/dev/console", O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (console_fd < 0)
        console_fd = open("/dev/ttyS0", O_WRONLY | O_NOCTTY | O_CLOEXEC);
}

static void load_module(const char *name)
{
    char path[300];
    int fd;

    snprintf(path, sizeof(path), "/modules/%s", name);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        kd_say("WARN module=%s errno=%d", name, errno);
        return;
    }
    /* Drivers whose device is absent still load (they only register);
     * EEXIST means built in or already there: both are fine. */
    if (syscall(SYS_finit_module, fd, "", 0) < 0 && errno != EEXIST)
        kd_say("WARN module=%s errno=%d", name, errno);
    close(fd);
}

/* /modules/order lists the screen modules, a line "@ready", the input
 * modules, a line "@agent", the agent's, a line "@sound", then the sound
 * card's: phase n loads the modules after the n-th marker line (a line
 * starting with '@'). */
void kd_load_modules(int phase)
{
    char line[256];
    int at = 0;
    FILE *f = fopen("/modules/order", "re");

    if (!f) {
        kd_say("WARN modules=missing");
        return;
    }
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '@')
            at++;
        else if (line[0] != '\0' && line[0] != '#' && at == phase)
            load_module(line);
    }
    fclose(f);
}

void kd_boot(void)
{
    mount_or_warn("devtmpfs", "/dev", "devtmpfs");
    open_console();
    mount_or_warn("proc", "/proc", "proc");
    mount_or_warn("sysfs", "/sys", "sysfs");
    kd_load_modules(0);
}

/* Returns the value of key=value from /proc/cmdline, or NULL when absent. */
const char *kd_cmdline_get(const char *key, char *buf, size_t len)
{
    char cmdline[4096];
    size_t klen = strlen(key);
    ssize_t n;
    int fd = open("/proc/cmdline", O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return NULL;
    n = read(fd, cmdline, sizeof(cmdline) - 1);
    close(fd);
    if (n <= 0)
        return NULL;
    cmdline[n] = '\0';

    for (char *tok = strtok(cmdline, " \t\n"); tok; tok = strtok(NULL, " \t\n")) {
        if (strncmp(tok, key, klen) == 0 && tok[klen] == '=') {
            snprintf(buf, len, "%s", tok + klen + 1);
            return buf;
        }
    }
    return NULL;
}
