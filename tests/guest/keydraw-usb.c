/* SPDX-License-Identifier: GPL-2.0-or-later */
/* keydraw.usb=1: watches the USB devices the kernel enumerated (sysfs), USB lines as they come and go, for the usbredir tests. */
#include "keydraw.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEVICES 32
#define POLL_MS 100

/* One enumerated device: its sysfs name (bus-port) and vendor:product. */
struct usb_dev {
    char name[32];
    char id[16];
};

/* The first line of /sys/bus/usb/devices/NAME/ATTR, newline cut. */
static bool read_attr(const char *name, const char *attr, char *buf, size_t len)
{
    char path[128];
    FILE *f;
    bool ok;

    snprintf(path, sizeof(path), "/sys/bus/usb/devices/%s/%s", name, attr);
    if (!(f = fopen(path, "re")))
        return false;
    ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    if (ok)
        buf[strcspn(buf, "\n")] = '\0';
    return ok;
}

/* The devices now, root hubs (Linux Foundation, 1d6b) left out. */
static int scan(struct usb_dev *out)
{
    DIR *d = opendir("/sys/bus/usb/devices");
    struct dirent *e;
    int n = 0;

    if (!d)
        return 0;
    while ((e = readdir(d)) && n < MAX_DEVICES) {
        char vid[8], pid[8];

        /* Interfaces (1-1:1.0) have no idVendor; devices do. */
        if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof(out[n].name) ||
            !read_attr(e->d_name, "idVendor", vid, sizeof(vid)) ||
            !read_attr(e->d_name, "idProduct", pid, sizeof(pid)) ||
            strcmp(vid, "1d6b") == 0)
            continue;
        snprintf(out[n].name, sizeof(out[n].name), "%s", e->d_name);
        snprintf(out[n].id, sizeof(out[n].id), "%.4s:%.4s", vid, pid);
        n++;
    }
    closedir(d);
    return n;
}

static bool has(const struct usb_dev *set, int n, const struct usb_dev *dev)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(set[i].name, dev->name) == 0 && strcmp(set[i].id, dev->id) == 0)
            return true;
    }
    return false;
}

static void *usb_thread(void *arg)
{
    static struct usb_dev seen[MAX_DEVICES], now[MAX_DEVICES];
    int n_seen = 0;
    const struct timespec tick = { 0, POLL_MS * 1000000L };

    (void)arg;
    kd_say("USB watching");
    for (;;) {
        int n_now = scan(now);

        for (int i = 0; i < n_now; i++) {
            if (!has(seen, n_seen, &now[i])) {
                char product[64] = "";

                read_attr(now[i].name, "product", product, sizeof(product));
                kd_say("USB add %s %s product=%s", now[i].name, now[i].id, product);
            }
        }
        for (int i = 0; i < n_seen; i++) {
            if (!has(now, n_now, &seen[i]))
                kd_say("USB remove %s %s", seen[i].name, seen[i].id);
        }
        memcpy(seen, now, sizeof(now[0]) * (size_t)n_now);
        n_seen = n_now;
        nanosleep(&tick, NULL);
    }
    return NULL;
}

void kd_usb_start(void)
{
    char buf[8];
    pthread_t tid;

    if (!kd_cmdline_get("keydraw.usb", buf, sizeof(buf)) || strcmp(buf, "1") != 0)
        return;
    if (pthread_create(&tid, NULL, usb_thread, NULL) == 0)
        pthread_detach(tid);
    else
        kd_say("WARN usb thread");
}
