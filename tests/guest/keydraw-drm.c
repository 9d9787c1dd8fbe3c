/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Finds the DRM card, sets 1280x800 on a dumb buffer, flushes damage, follows the preferred mode. */
#define _GNU_SOURCE
#include "keydraw.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/netlink.h>

#include <drm.h>
#include <drm_mode.h>

#define MAX_IDS 16
/* keydraw-draw.c's screen background, for the margin beyond 1280x800. */
#define MARGIN_BG 0x1d2330u
/* Largest mode followed: a bigger dumb buffer would not fit the guest. */
#define FOLLOW_MAX_PIXELS (3840u * 2160u)
#define FOLLOW_POLL_NS (2000LL * 1000 * 1000)

/* What the screen runs on, kept for re-creating it. */
static uint32_t out_conn, out_crtc, cur_handle;

static int xioctl(int fd, unsigned long req, void *arg)
{
    int r;

    do {
        r = ioctl(fd, req, arg);
    } while (r < 0 && (errno == EINTR || errno == EAGAIN));
    return r;
}

/* Module probing is synchronous for PCI/virtio, but give udev-less devtmpfs
 * a bounded moment to create the node anyway. */
static int open_card(char *driver, size_t len)
{
    for (int tries = 0; tries < 500; tries++) {
        for (int i = 0; i < 4; i++) {
            char path[32];
            struct drm_version v = { 0 };
            int fd;

            snprintf(path, sizeof(path), "/dev/dri/card%d", i);
            fd = open(path, O_RDWR | O_CLOEXEC);
            if (fd < 0)
                continue;
            v.name = driver;
            v.name_len = len - 1;
            if (xioctl(fd, DRM_IOCTL_VERSION, &v) == 0) {
                driver[v.name_len < len ? v.name_len : len - 1] = '\0';
                if (strcmp(driver, "virtio_gpu") == 0 ||
                    strcmp(driver, "bochs-drm") == 0 ||
                    strcmp(driver, "bochs") == 0)
                    return fd;
            }
            close(fd);
        }
        nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
    }
    return -1;
}

/* A mode of exactly 1280x800 from the connector's list; the virtual
 * devices list every DMT mode, but fall back to stretching the first mode's
 * timings so a shorter list cannot stop the test. */
static struct drm_mode_modeinfo pick_mode(const struct drm_mode_modeinfo *modes,
                                          unsigned count)
{
    struct drm_mode_modeinfo m;

    for (unsigned i = 0; i < count; i++) {
        if (modes[i].hdisplay == KD_W && modes[i].vdisplay == KD_H)
            return modes[i];
    }
    m = modes[0];
    m.hdisplay = KD_W;
    m.hsync_start = KD_W + 48;
    m.hsync_end = KD_W + 80;
    m.htotal = KD_W + 160;
    m.vdisplay = KD_H;
    m.vsync_start = KD_H + 3;
    m.vsync_end = KD_H + 9;
    m.vtotal = KD_H + 23;
    m.clock = (uint32_t)((uint64_t)m.htotal * m.vtotal * 60 / 1000);
    snprintf(m.name, sizeof(m.name), "%dx%d", KD_W, KD_H);
    return m;
}

static bool find_output(int fd, uint32_t *conn_id, uint32_t *crtc_id,
                        struct drm_mode_modeinfo *mode)
{
    uint32_t crtcs[MAX_IDS], conns[MAX_IDS];
    struct drm_mode_card_res res = { 0 };

    if (xioctl(fd, DRM_IOCTL_MODE_GETRESOURCES, &res) < 0)
        return false;
    if (res.count_crtcs == 0 || res.count_connectors == 0)
        return false;
    res.count_crtcs = res.count_crtcs > MAX_IDS ? MAX_IDS : res.count_crtcs;
    res.count_connectors = res.count_connectors > MAX_IDS ? MAX_IDS
                                                          : res.count_connectors;
    res.count_fbs = 0;
    res.count_encoders = 0;
    res.crtc_id_ptr = (uintptr_t)crtcs;
    res.connector_id_ptr = (uintptr_t)conns;
    if (xioctl(fd, DRM_IOCTL_MODE_GETRESOURCES, &res) < 0)
        return false;

    for (unsigned i = 0; i < res.count_connectors; i++) {
        struct drm_mode_get_connector c = { .connector_id = conns[i] };
        struct drm_mode_get_encoder enc = { 0 };
        struct drm_mode_modeinfo *modes;
        uint32_t encs[MAX_IDS];

        if (xioctl(fd, DRM_IOCTL_MODE_GETCONNECTOR, &c) < 0)
            continue;
        if (c.connection != 1 || c.count_modes == 0 || c.count_encoders == 0)
            continue;
        modes = calloc(c.count_modes, sizeof(*modes));
        if (!modes)
            return false;
        c.count_encoders = c.count_encoders > MAX_IDS ? MAX_IDS : c.count_encoders;
        c.modes_ptr = (uintptr_t)modes;
        c.encoders_ptr = (uintptr_t)encs;
        c.count_props = 0;
        if (xioctl(fd, DRM_IOCTL_MODE_GETCONNECTOR, &c) < 0 || c.count_modes == 0) {
            free(modes);
            continue;
        }
        *mode = pick_mode(modes, c.count_modes);
        free(modes);

        enc.encoder_id = c.encoder_id ? c.encoder_id : encs[0];
        if (xioctl(fd, DRM_IOCTL_MODE_GETENCODER, &enc) < 0)
            continue;
        *conn_id = c.connector_id;
        if (enc.crtc_id) {
            *crtc_id = enc.crtc_id;
            return true;
        }
        for (unsigned k = 0; k < res.count_crtcs; k++) {
            if (enc.possible_crtcs & (1u << k)) {
                *crtc_id = crtcs[k];
                return true;
            }
        }
    }
    return false;
}

/* A mapped dumb buffer with its framebuffer; false (errno set) on failure. */
struct buffer {
    uint32_t handle, fb_id, stride;
    uint32_t *pixels;
    size_t size;
};

static bool make_buffer(int fd, uint32_t w, uint32_t h, struct buffer *b)
{
    struct drm_mode_create_dumb dumb = { .width = w, .height = h, .bpp = 32 };
    struct drm_mode_fb_cmd addfb = { .width = w, .height = h, .bpp = 32, .depth = 24 };
    struct drm_mode_map_dumb map = { 0 };
    struct drm_mode_destroy_dumb destroy = { 0 };
    void *p;
    int err;

    if (xioctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &dumb) < 0)
        return false;
    addfb.pitch = dumb.pitch;
    addfb.handle = dumb.handle;
    map.handle = dumb.handle;
    if (xioctl(fd, DRM_IOCTL_MODE_ADDFB, &addfb) < 0)
        goto fail;
    if (xioctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &map) < 0)
        goto fail_fb;
    p = mmap(NULL, dumb.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)map.offset);
    if (p == MAP_FAILED)
        goto fail_fb;
    *b = (struct buffer){ dumb.handle, addfb.fb_id, dumb.pitch / 4, p, dumb.size };
    return true;

fail_fb:
    err = errno;
    xioctl(fd, DRM_IOCTL_MODE_RMFB, &addfb.fb_id);
    errno = err;
fail:
    err = errno;
    destroy.handle = dumb.handle;
    xioctl(fd, DRM_IOCTL_MODE_DESTROY_DUMB, &destroy);
    errno = err;
    return false;
}

static int set_crtc(struct kd_fb *fb, const struct drm_mode_modeinfo *mode)
{
    struct drm_mode_crtc crtc = {
        .crtc_id = out_crtc,
        .fb_id = fb->fb_id,
        .set_connectors_ptr = (uintptr_t)&out_conn,
        .count_connectors = 1,
        .mode = *mode,
        .mode_valid = 1,
    };

    return xioctl(fb->fd, DRM_IOCTL_MODE_SETCRTC, &crtc);
}

void kd_drm_open(struct kd_fb *fb)
{
    char driver[64] = "";
    struct drm_mode_modeinfo mode;
    struct buffer b;

    fb->fd = open_card(driver, sizeof(driver));
    if (fb->fd < 0)
        kd_fail("reason=no-drm-card");
    fb->dev = strcmp(driver, "virtio_gpu") == 0 ? "virtio-gpu" : "bochs";

    if (!find_output(fb->fd, &out_conn, &out_crtc, &mode))
        kd_fail("reason=no-connected-output dev=%s", fb->dev);
    if (!make_buffer(fb->fd, KD_W, KD_H, &b))
        kd_fail("reason=dumb-buffer errno=%d", errno);

    cur_handle = b.handle;
    fb->pixels = b.pixels;
    fb->map_size = b.size;
    fb->stride = b.stride;
    fb->fb_id = b.fb_id;
    fb->w = KD_W;
    fb->h = KD_H;

    /* Draw before showing so the first scanout is already the full picture. */
    kd_draw_background(fb);

    if (set_crtc(fb, &mode) < 0)
        kd_fail("reason=setcrtc errno=%d dev=%s", errno, fb->dev);

    kd_drm_flush(fb, &(struct kd_rect){ 0, 0, KD_W, KD_H });
}

/* The damage clips are what the benchmarks measure: only the changed area
 * unless keydraw.flush=full asks for the whole plane, as some kernels do. */
void kd_drm_flush(struct kd_fb *fb, const struct kd_rect *damage)
{
    struct drm_clip_rect clip;
    struct drm_mode_fb_dirty_cmd cmd = { 0 };

    if (fb->dirty_broken)
        return;
    if (fb->full_flush) {
        clip = (struct drm_clip_rect){ 0, 0, (unsigned short)fb->w, (unsigned short)fb->h };
    } else {
        clip.x1 = (unsigned short)damage->x;
        clip.y1 = (unsigned short)damage->y;
        clip.x2 = (unsigned short)(damage->x + damage->w);
        clip.y2 = (unsigned short)(damage->y + damage->h);
    }
    cmd.fb_id = fb->fb_id;
    cmd.num_clips = 1;
    cmd.clips_ptr = (uintptr_t)&clip;
    if (xioctl(fb->fd, DRM_IOCTL_MODE_DIRTYFB, &cmd) < 0) {
        /* bochs scans out of VRAM, which qemu watches itself, and has no
         * dirty hook: ENOSYS. Say so once; other errors are real. */
        if (errno == ENOSYS || errno == EOPNOTSUPP) {
            fb->dirty_broken = true;
            kd_say("NOTE dirtyfb=unsupported dev=%s", fb->dev);
        } else if (fb->dirty_warnings < 5) {
            fb->dirty_warnings++;
            kd_say("WARN dirtyfb errno=%d", errno);
        }
    }
}

/* ---- keydraw.resize=1 ------------------------------------------------------ */

static int uevent_fd = -1;
static uint32_t pref_w, pref_h;         /* the preferred mode last seen */
static long long next_poll;

/* The card's other connectors are only watched, never driven: a test sees
 * that a resize request for another head (qemu's Console_<n>) reached the
 * guest. Virtual cards have a handful; more are not watched. */
#define MAX_WATCHED 8
static struct {
    uint32_t id;
    unsigned index;                     /* position in the card's list */
    uint32_t w, h;                      /* preferred mode last seen, 0x0 if none */
} watched[MAX_WATCHED];
static unsigned n_watched;

static long long mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The connector's preferred mode, probed afresh (we are DRM master, so a
 * GETCONNECTOR without modes re-reads the host's display info). */
static bool preferred_mode(int fd, uint32_t conn_id, struct drm_mode_modeinfo *out)
{
    struct drm_mode_get_connector c = { .connector_id = conn_id };
    struct drm_mode_modeinfo *modes;
    bool found = false;

    if (xioctl(fd, DRM_IOCTL_MODE_GETCONNECTOR, &c) < 0 || c.count_modes == 0)
        return false;
    modes = calloc(c.count_modes, sizeof(*modes));
    if (!modes)
        return false;
    c.modes_ptr = (uintptr_t)modes;
    c.count_encoders = 0;
    c.count_props = 0;
    if (xioctl(fd, DRM_IOCTL_MODE_GETCONNECTOR, &c) == 0) {
        for (unsigned i = 0; i < c.count_modes && !found; i++) {
            if (modes[i].type & DRM_MODE_TYPE_PREFERRED) {
                *out = modes[i];
                found = true;
            }
        }
    }
    free(modes);
    return found;
}

/* The connectors other than ours, in the card's order, with the preferred
 * mode each has now (a disconnected one has no modes, so none). */
static void watch_others(int fd)
{
    uint32_t conns[MAX_WATCHED];
    struct drm_mode_card_res res = { 0 };
    struct drm_mode_modeinfo m;

    if (xioctl(fd, DRM_IOCTL_MODE_GETRESOURCES, &res) < 0 || res.count_connectors == 0)
        return;
    /* Only the connector ids: the kernel copies at most count_* of each. */
    res.count_connectors = res.count_connectors > MAX_WATCHED ? MAX_WATCHED
                                                              : res.count_connectors;
    res.count_fbs = 0;
    res.count_crtcs = 0;
    res.count_encoders = 0;
    res.connector_id_ptr = (uintptr_t)conns;
    if (xioctl(fd, DRM_IOCTL_MODE_GETRESOURCES, &res) < 0)
        return;
    for (unsigned i = 0; i < res.count_connectors && i < MAX_WATCHED; i++) {
        if (conns[i] == out_conn)
            continue;
        watched[n_watched].id = conns[i];
        watched[n_watched].index = i;
        if (preferred_mode(fd, conns[i], &m)) {
            watched[n_watched].w = m.hdisplay;
            watched[n_watched].h = m.vdisplay;
        }
        n_watched++;
    }
}

/* Says when another connector's preferred mode changed or (re)appeared; a
 * connector that lost its modes is quiet until it has one again. */
static void probe_others(int fd)
{
    struct drm_mode_modeinfo m;

    for (unsigned i = 0; i < n_watched; i++) {
        if (!preferred_mode(fd, watched[i].id, &m)) {
            watched[i].w = watched[i].h = 0;
            continue;
        }
        if (m.hdisplay == watched[i].w && m.vdisplay == watched[i].h)
            continue;
        watched[i].w = m.hdisplay;
        watched[i].h = m.vdisplay;
        kd_say("PREFERRED connector=%u %ux%u", watched[i].index, watched[i].w,
               watched[i].h);
    }
}

void kd_drm_follow_start(struct kd_fb *fb)
{
    struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = 1 };
    struct drm_mode_modeinfo m;

    /* Only changes count: the mode the host preferred at boot stays 1280x800,
     * and the other connectors' boot-time modes are not reported either. */
    if (preferred_mode(fb->fd, out_conn, &m)) {
        pref_w = m.hdisplay;
        pref_h = m.vdisplay;
    }
    watch_others(fb->fd);
    uevent_fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                       NETLINK_KOBJECT_UEVENT);
    if (uevent_fd >= 0 && bind(uevent_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
        close(uevent_fd);
        uevent_fd = -1;
    }
    next_poll = mono_ns() + FOLLOW_POLL_NS;
    kd_say("NOTE resize=follow preferred=%ux%u uevents=%s", pref_w, pref_h,
           uevent_fd >= 0 ? "yes" : "no");
}

/* A DRM hotplug uevent came (virtio-gpu sends one after new display info). */
static bool hotplug_seen(void)
{
    char buf[2048];
    bool seen = false;
    ssize_t n;

    while (uevent_fd >= 0 && (n = recv(uevent_fd, buf, sizeof(buf) - 1, 0)) > 0) {
        buf[n] = '\0';
        for (char *p = buf; p < buf + n; p += strlen(p) + 1)
            seen |= strcmp(p, "HOTPLUG=1") == 0;
    }
    return seen;
}

static void free_buffer(int fd, struct buffer *b)
{
    struct drm_mode_destroy_dumb destroy = { .handle = b->handle };

    xioctl(fd, DRM_IOCTL_MODE_RMFB, &b->fb_id);
    munmap(b->pixels, b->size);
    xioctl(fd, DRM_IOCTL_MODE_DESTROY_DUMB, &destroy);
}

/* The old picture goes to the new buffer: the 1280x800 canvas at the top
 * left (key box colour, activity state and all), the margin plain. */
static void switch_to(struct kd_fb *fb, const struct drm_mode_modeinfo *m)
{
    uint32_t bw = m->hdisplay > KD_W ? m->hdisplay : KD_W;
    uint32_t bh = m->vdisplay > KD_H ? m->vdisplay : KD_H;
    struct buffer b, prev;
    int prev_w, prev_h, err = 0;

    if ((uint64_t)bw * bh > FOLLOW_MAX_PIXELS) {
        kd_say("WARN mode %ux%u too big to follow", m->hdisplay, m->vdisplay);
        return;
    }
    if (!make_buffer(fb->fd, bw, bh, &b)) {
        kd_say("WARN resize dumb-buffer %ux%u errno=%d", bw, bh, errno);
        return;
    }
    for (uint32_t y = 0; y < bh; y++) {
        for (uint32_t x = 0; x < bw; x++)
            b.pixels[(size_t)y * b.stride + x] = MARGIN_BG;
    }
    pthread_mutex_lock(&fb->lock);
    for (uint32_t y = 0; y < KD_H; y++)
        memcpy(b.pixels + (size_t)y * b.stride, fb->pixels + (size_t)y * fb->stride,
               KD_W * sizeof(uint32_t));
    prev = (struct buffer){ cur_handle, fb->fb_id, fb->stride, fb->pixels, fb->map_size };
    prev_w = fb->w;
    prev_h = fb->h;
    fb->pixels = b.pixels;
    fb->map_size = b.size;
    fb->stride = b.stride;
    fb->fb_id = b.fb_id;
    fb->w = m->hdisplay;
    fb->h = m->vdisplay;
    if (set_crtc(fb, m) < 0) {
        err = errno;
        fb->pixels = prev.pixels;
        fb->map_size = prev.size;
        fb->stride = prev.stride;
        fb->fb_id = prev.fb_id;
        fb->w = prev_w;
        fb->h = prev_h;
    }
    pthread_mutex_unlock(&fb->lock);
    if (err) {
        free_buffer(fb->fd, &b);
        kd_say("WARN resize setcrtc %ux%u errno=%d", m->hdisplay, m->vdisplay, err);
        return;
    }
    free_buffer(fb->fd, &prev);
    cur_handle = b.handle;
    kd_drm_flush(fb, &(struct kd_rect){ 0, 0, fb->w, fb->h });
    kd_say("MODE %ux%u dev=%s", m->hdisplay, m->vdisplay, fb->dev);
}

void kd_drm_follow(struct kd_fb *fb)
{
    struct drm_mode_modeinfo m;
    long long now = mono_ns();

    if (!hotplug_seen() && now < next_poll)
        return;
    next_poll = now + FOLLOW_POLL_NS;
    probe_others(fb->fd);
    if (!preferred_mode(fb->fd, out_conn, &m) ||
        (m.hdisplay == pref_w && m.vdisplay == pref_h))
        return;
    pref_w = m.hdisplay;
    pref_h = m.vdisplay;
    if (m.hdisplay != fb->w || m.vdisplay != fb->h)
        switch_to(fb, &m);
}
