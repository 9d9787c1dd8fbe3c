/* SPDX-License-Identifier: GPL-2.0-or-later */
/* keydraw.ccid=1: talks CCID over usbfs to qemu's usb-ccid reader once it appears (the kernel has no CCID driver): slot status, power on (the card's ATR), one APDU and the GET RESPONSE its status asks for, CCID lines. */
#define _GNU_SOURCE
#include "keydraw.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/usbdevice_fs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* qemu's usb-ccid. */
#define CCID_ID "08e6:4433"
#define CCID_WAIT_S 300
#define CCID_IO_MS 20000

static bool sys_read(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return false;
    n = read(fd, buf, len - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    return true;
}

/* The sysfs name of the reader (e.g. "1-1"), once the kernel has it. */
static bool find_reader(char *name, size_t len)
{
    DIR *d = opendir("/sys/bus/usb/devices");
    struct dirent *e;
    bool found = false;

    if (!d)
        return false;
    while (!found && (e = readdir(d))) {
        char path[512], vid[8], pid[8], id[16];

        if (e->d_name[0] == '.' || strchr(e->d_name, ':'))
            continue;
        snprintf(path, sizeof(path), "/sys/bus/usb/devices/%s/idVendor", e->d_name);
        if (!sys_read(path, vid, sizeof(vid)))
            continue;
        snprintf(path, sizeof(path), "/sys/bus/usb/devices/%s/idProduct", e->d_name);
        if (!sys_read(path, pid, sizeof(pid)))
            continue;
        snprintf(id, sizeof(id), "%s:%s", vid, pid);
        if (strcmp(id, CCID_ID) == 0) {
            snprintf(name, len, "%s", e->d_name);
            found = true;
        }
    }
    closedir(d);
    return found;
}

/* The bulk endpoints of interface 0, from its ep_XX directories. */
static bool find_bulk(const char *name, unsigned *ep_in, unsigned *ep_out)
{
    char dir[600];
    DIR *d;
    struct dirent *e;

    *ep_in = *ep_out = 0;
    snprintf(dir, sizeof(dir), "/sys/bus/usb/devices/%s/%s:1.0", name, name);
    if (!(d = opendir(dir)))
        return false;
    while ((e = readdir(d))) {
        char path[1000], type[32];

        if (strncmp(e->d_name, "ep_", 3) != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s/type", dir, e->d_name);
        if (!sys_read(path, type, sizeof(type)) || strcmp(type, "Bulk") != 0)
            continue;
        unsigned addr = (unsigned)strtoul(e->d_name + 3, NULL, 16);
        if (addr & 0x80)
            *ep_in = addr;
        else
            *ep_out = addr;
    }
    closedir(d);
    return *ep_in && *ep_out;
}

static int bulk(int fd, unsigned ep, uint8_t *data, unsigned len)
{
    struct usbdevfs_bulktransfer t = { .ep = ep, .len = len, .timeout = CCID_IO_MS,
                                       .data = data };

    return ioctl(fd, USBDEVFS_BULK, &t);
}

/* One command and its answer (at most `len` bytes into `in`); the answer's
 * length, or -1. */
static int command(int fd, unsigned ep_in, unsigned ep_out, uint8_t type, const uint8_t *data,
                   uint32_t n, uint8_t *in, unsigned len)
{
    static uint8_t seq;
    uint8_t out[10 + 272];

    if (n > sizeof(out) - 10)
        return -1;
    memset(out, 0, 10);
    out[0] = type;
    out[1] = (uint8_t)n, out[2] = (uint8_t)(n >> 8);
    out[6] = seq++;
    memcpy(out + 10, data, n);
    if (bulk(fd, ep_out, out, 10 + n) != (int)(10 + n))
        return -1;
    return bulk(fd, ep_in, in, len);
}

static void hex(const uint8_t *p, int n, char *out)
{
    for (int i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", p[i]);
    out[2 * n] = '\0';
}

static void *ccid_main(void *arg)
{
    /* SELECT by AID of the CAC card manager applet; the answer is the
     * virtual card's, from the client. */
    static const uint8_t select[] = { 0x00, 0xa4, 0x04, 0x00, 0x07,
                                      0xa0, 0x00, 0x00, 0x00, 0x79, 0x01, 0x00 };
    char name[256], path[600], busnum[8], devnum[8], text[600];
    uint8_t in[300];
    unsigned ep_in, ep_out, iface = 0;
    int fd = -1, n, present = -1;

    (void)arg;
    for (int i = 0; !find_reader(name, sizeof(name)); i++) {
        if (i >= CCID_WAIT_S * 10) {
            kd_say("CCID failed no reader");
            return NULL;
        }
        usleep(100 * 1000);
    }
    snprintf(path, sizeof(path), "/sys/bus/usb/devices/%s/busnum", name);
    sys_read(path, busnum, sizeof(busnum));
    snprintf(path, sizeof(path), "/sys/bus/usb/devices/%s/devnum", name);
    sys_read(path, devnum, sizeof(devnum));
    snprintf(path, sizeof(path), "/dev/bus/usb/%03d/%03d", atoi(busnum), atoi(devnum));
    /* The device's interfaces (and their ep_XX directories) appear in sysfs
     * once it is configured, a moment after the device itself, and
     * devtmpfs makes the node a moment after sysfs has the name: wait for
     * both. */
    for (int i = 0; i < 50 && !find_bulk(name, &ep_in, &ep_out); i++)
        usleep(100 * 1000);
    if (!ep_in || !ep_out) {
        kd_say("CCID failed endpoints %s:1.0 errno=%d", name, errno);
        return NULL;
    }
    for (int i = 0; i < 50 && (fd = open(path, O_RDWR | O_CLOEXEC)) < 0; i++)
        usleep(100 * 1000);
    if (fd < 0) {
        kd_say("CCID failed open %s errno=%d", path, errno);
        return NULL;
    }
    if (ioctl(fd, USBDEVFS_CLAIMINTERFACE, &iface) < 0) {
        kd_say("CCID failed claim %s errno=%d", path, errno);
        close(fd);
        return NULL;
    }
    kd_say("CCID reader %s %s", name, CCID_ID);
    /* The card comes with the client's virtual card: wait for it. */
    for (int i = 0; i < CCID_WAIT_S * 5; i++) {
        n = command(fd, ep_in, ep_out, 0x65, NULL, 0, in, sizeof(in));
        if (n < 10 || in[0] != 0x81) {
            kd_say("CCID failed slot-status n=%d errno=%d", n, errno);
            return NULL;
        }
        if ((in[7] & 3) != present) {
            present = in[7] & 3;
            kd_say("CCID slot icc=%s", present == 2 ? "absent" : "present");
        }
        if (present != 2)
            break;
        usleep(200 * 1000);
    }
    if (present == 2) {
        kd_say("CCID failed no card");
        return NULL;
    }
    n = command(fd, ep_in, ep_out, 0x62, NULL, 0, in, sizeof(in));
    if (n < 10 || in[0] != 0x80 || (in[7] & 0x40)) {
        kd_say("CCID failed power-on n=%d status=%d error=%d", n, n >= 10 ? in[7] : -1,
               n >= 10 ? in[8] : -1);
        return NULL;
    }
    hex(in + 10, n - 10, text);
    kd_say("CCID atr=%s", text);
    n = command(fd, ep_in, ep_out, 0x6f, select, sizeof(select), in, sizeof(in));
    if (n < 12 || in[0] != 0x80 || (in[7] & 0x40)) {
        kd_say("CCID failed apdu n=%d status=%d error=%d", n, n >= 10 ? in[7] : -1,
               n >= 10 ? in[8] : -1);
        return NULL;
    }
    hex(in + 10, n - 10, text);
    kd_say("CCID apdu response=%s", text);
    if (n == 12 && in[10] == 0x61) {
        /* The card has in[11] bytes of answer: GET RESPONSE. */
        uint8_t get[] = { 0x00, 0xc0, 0x00, 0x00, in[11] };

        n = command(fd, ep_in, ep_out, 0x6f, get, sizeof(get), in, sizeof(in));
        if (n < 12 || in[0] != 0x80 || (in[7] & 0x40)) {
            kd_say("CCID failed get-response n=%d", n);
            return NULL;
        }
        hex(in + 10, n - 10, text);
        kd_say("CCID get-response=%s", text);
    }
    return NULL;
}

void kd_ccid_start(void)
{
    char buf[8];
    pthread_t t;

    if (!kd_cmdline_get("keydraw.ccid", buf, sizeof(buf)) || strcmp(buf, "1") != 0)
        return;
    if (pthread_create(&t, NULL, ccid_main, NULL) != 0)
        kd_say("WARN ccid thread errno=%d", errno);
    else
        pthread_detach(t);
}
