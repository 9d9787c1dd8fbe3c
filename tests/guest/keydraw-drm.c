/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Finds the DRM card, sets 1280x800 on a dumb buffer and flushes damage. */
#define _GNU_SOURCE
#include "keydraw.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <drm.h>
#include <drm_mode.h>

#define MAX_IDS 16

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

void kd_drm_open(struct kd_fb *fb)
{
    char driver[64] = "";
    struct drm_mode_modeinfo mode;
    struct drm_mode_create_dumb dumb = { .width = KD_W, .height = KD_H, .bpp = 32 };
    struct drm_mode_fb_cmd addfb = { 0 };
    struct drm_mode_map_dumb map = { 0 };
    struct drm_mode_crtc crtc = { 0 };
    uint32_t conn_id = 0, crtc_id = 0;
    void *p;

    fb->fd = open_card(driver, sizeof(driver));
    if (fb->fd < 0)
        kd_fail("reason=no-drm-card");
    fb->dev = strcmp(driver, "virtio_gpu") == 0 ? "virtio-gpu" : "bochs";

    if (!find_output(fb->fd, &conn_id, &crtc_id, &mode))
        kd_fail("reason=no-connected-output dev=%s", fb->dev);

    if (xioctl(fb->fd, DRM_IOCTL_MODE_CREATE_DUMB, &dumb) < 0)
        kd_fail("reason=create-dumb errno=%d", errno);
    addfb.width = KD_W;
    addfb.height = KD_H;
    addfb.bpp = 32;
    addfb.depth = 24;
    addfb.pitch = dumb.pitch;
    addfb.handle = dumb.handle;
    if (xioctl(fb->fd, DRM_IOCTL_MODE_ADDFB, &addfb) < 0)
        kd_fail("reason=addfb errno=%d", errno);
    map.handle = dumb.handle;
    if (xioctl(fb->fd, DRM_IOCTL_MODE_MAP_DUMB, &map) < 0)
        kd_fail("reason=map-dumb errno=%d", errno);
    p = mmap(NULL, dumb.size, PROT_READ | PROT_WRITE, MAP_SHARED, fb->fd,
             (off_t)map.offset);
    if (p == MAP_FAILED)
        kd_fail("reason=mmap errno=%d", errno);

    fb->pixels = p;
    fb->map_size = dumb.size;
    fb->stride = dumb.pitch / 4;
    fb->fb_id = addfb.fb_id;

    /* Draw before showing so the first scanout is already the full picture. */
    kd_draw_background(fb);

    crtc.crtc_id = crtc_id;
    crtc.fb_id = fb->fb_id;
    crtc.set_connectors_ptr = (uintptr_t)&conn_id;
    crtc.count_connectors = 1;
    crtc.mode = mode;
    crtc.mode_valid = 1;
    if (xioctl(fb->fd, DRM_IOCTL_MODE_SETCRTC, &crtc) < 0)
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
        clip = (struct drm_clip_rect){ 0, 0, KD_W, KD_H };
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
