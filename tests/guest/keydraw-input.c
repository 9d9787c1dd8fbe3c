/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reads every evdev device: keys repaint the key box, buttons report clicks. */
#define _GNU_SOURCE
#include "keydraw.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEVS 32

struct axis {
    bool present;
    int min, max;
    int value;
};

struct dev {
    int fd;
    dev_t rdev;
    struct axis x, y;
    int pending_button;   /* reported at SYN_REPORT, once X/Y are current */
};

static struct dev devs[MAX_DEVS];
static int ndevs;
static unsigned presses;
static struct kd_fb *screen;

static void read_axis(int fd, int code, struct axis *a)
{
    struct input_absinfo info;

    if (ioctl(fd, EVIOCGABS(code), &info) == 0 && info.maximum > info.minimum) {
        a->present = true;
        a->min = info.minimum;
        a->max = info.maximum;
        a->value = info.value;
    }
}

static bool known(dev_t rdev)
{
    for (int i = 0; i < ndevs; i++) {
        if (devs[i].rdev == rdev)
            return true;
    }
    return false;
}

/* USB and virtio input devices show up after READY (enumeration is
 * asynchronous), so the directory is scanned again and again. */
static void scan(void)
{
    DIR *d = opendir("/dev/input");
    struct dirent *e;

    if (!d)
        return;
    while ((e = readdir(d)) && ndevs < MAX_DEVS) {
        char path[300], name[128] = "";
        struct stat st;
        struct dev *v;
        int fd;

        if (strncmp(e->d_name, "event", 5) != 0)
            continue;
        snprintf(path, sizeof(path), "/dev/input/%s", e->d_name);
        if (stat(path, &st) < 0 || known(st.st_rdev))
            continue;
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
            continue;
        v = &devs[ndevs++];
        memset(v, 0, sizeof(*v));
        v->fd = fd;
        v->rdev = st.st_rdev;
        read_axis(fd, ABS_X, &v->x);
        read_axis(fd, ABS_Y, &v->y);
        ioctl(fd, EVIOCGNAME(sizeof(name) - 1), name);
        kd_say("INPUT dev=%s abs=%d name=%s", e->d_name,
               v->x.present && v->y.present, name);
    }
    closedir(d);
}

/* Round to nearest so that both qemu's own scaling (floor of x*32767/w) and
 * a test's rounded value land on the intended pixel. */
static int scale(const struct axis *a, int size)
{
    long long range = (long long)a->max - a->min;
    long long v = (long long)a->value - a->min;
    long long px;

    if (!a->present || range <= 0)
        return -1;
    px = (v * size * 2 + range) / (2 * range);
    if (px < 0)
        px = 0;
    if (px > size - 1)
        px = size - 1;
    return (int)px;
}

static void handle(struct dev *v, const struct input_event *ev)
{
    switch (ev->type) {
    case EV_ABS:
        if (ev->code == ABS_X)
            v->x.value = ev->value;
        else if (ev->code == ABS_Y)
            v->y.value = ev->value;
        break;
    case EV_KEY:
        if (ev->value != 1)
            break;
        /* BTN_MISC..BTN_GEAR_UP are buttons; everything else is a key. */
        if (ev->code >= BTN_MISC && ev->code <= BTN_GEAR_UP) {
            v->pending_button = ev->code;
        } else {
            presses++;
            pthread_mutex_lock(&screen->lock);
            kd_draw_keybox(screen, presses);
            kd_drm_flush(screen, &(struct kd_rect){ KD_KEYBOX_X, KD_KEYBOX_Y,
                                                    KD_KEYBOX_SIZE, KD_KEYBOX_SIZE });
            pthread_mutex_unlock(&screen->lock);
            kd_say("KEY code=%u color=%06x", ev->code, kd_keybox_color(presses));
        }
        break;
    case EV_SYN:
        if (ev->code == SYN_REPORT && v->pending_button) {
            int w, h;

            /* The tablet spans the mode shown (it changes with keydraw.resize=1). */
            pthread_mutex_lock(&screen->lock);
            w = screen->w;
            h = screen->h;
            pthread_mutex_unlock(&screen->lock);
            kd_say("CLICK x=%d y=%d button=%d", scale(&v->x, w),
                   scale(&v->y, h), v->pending_button);
            v->pending_button = 0;
        }
        break;
    default:
        break;
    }
}

static void drain(struct dev *v)
{
    struct input_event evs[64];
    ssize_t n;

    while ((n = read(v->fd, evs, sizeof(evs))) > 0) {
        for (size_t i = 0; i < (size_t)n / sizeof(evs[0]); i++)
            handle(v, &evs[i]);
    }
    if (n < 0 && errno == ENODEV) {
        /* Unplugged: forget it so a new node with the same number works. */
        close(v->fd);
        v->fd = -1;
        v->rdev = 0;
    }
}

static long long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void *input_thread(void *arg)
{
    long long last_scan = 0;

    (void)arg;
    for (;;) {
        struct pollfd pfd[MAX_DEVS];
        int n = 0, map[MAX_DEVS];

        if (now_ms() - last_scan >= 200) {
            scan();
            last_scan = now_ms();
        }
        for (int i = 0; i < ndevs; i++) {
            if (devs[i].fd < 0)
                continue;
            pfd[n] = (struct pollfd){ .fd = devs[i].fd, .events = POLLIN };
            map[n++] = i;
        }
        if (poll(pfd, (nfds_t)n, 200) <= 0)
            continue;
        for (int i = 0; i < n; i++) {
            if (pfd[i].revents)
                drain(&devs[map[i]]);
        }
    }
    return NULL;
}

/* The tablet modules (USB above all) cost boot time, so they load after
 * READY, on a thread of their own so that keys are served meanwhile. */
static void *module_thread(void *arg)
{
    long long t0 = now_ms();

    (void)arg;
    kd_load_modules(1);
    kd_say("NOTE input-modules ms=%lld", now_ms() - t0);
    return NULL;
}

void kd_input_start(struct kd_fb *fb)
{
    pthread_t tid;

    screen = fb;
    scan();
    if (pthread_create(&tid, NULL, input_thread, NULL) != 0)
        kd_say("WARN input=no-thread");
    if (pthread_create(&tid, NULL, module_thread, NULL) != 0)
        kd_load_modules(1);
}
