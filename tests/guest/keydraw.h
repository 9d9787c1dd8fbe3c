/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared geometry and interfaces of keydraw, the /init of the test guest. */
#ifndef KEYDRAW_H
#define KEYDRAW_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The whole picture is fixed so that tests can check pixels blindly. With
 * keydraw.resize=1 the screen follows the host's preferred mode: the
 * 1280x800 picture stays at the top left, cropped or with a plain margin. */
#define KD_W 1280
#define KD_H 800
#define KD_KEYBOX_X 64
#define KD_KEYBOX_Y 64
#define KD_KEYBOX_SIZE 96
#define KD_ACT_X 624
#define KD_ACT_Y 160
#define KD_ACT_W 640
#define KD_ACT_H 480

/* Character cells of the pseudo-font. */
#define KD_CELL_W 8
#define KD_CELL_H 16

enum kd_mode {
    KD_MODE_IDLE,
    KD_MODE_BUSY,
    KD_MODE_HEAVY,
    KD_MODE_TYPING,
};

struct kd_rect {
    int x, y, w, h;
};

struct kd_fb {
    int fd;
    uint32_t *pixels;    /* mapped dumb buffer, XRGB8888 */
    size_t map_size;
    uint32_t stride;     /* in pixels; the buffer is at least KD_W x KD_H */
    int w, h;            /* the mode shown */
    uint32_t fb_id;
    bool full_flush;     /* keydraw.flush=full */
    bool dirty_broken;   /* DIRTYFB unsupported: nothing to flush */
    int dirty_warnings;
    const char *dev;     /* "virtio-gpu" or "bochs" */
    pthread_mutex_t lock; /* the input thread draws while a resize swaps buffers */
};

/* keydraw-boot.c: PID 1 chores and the serial console. */
void kd_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void kd_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void kd_boot(void);
void kd_load_modules(int phase);
const char *kd_cmdline_get(const char *key, char *buf, size_t len);

/* keydraw-drm.c: mode setting and flushing. */
void kd_drm_open(struct kd_fb *fb);
void kd_drm_flush(struct kd_fb *fb, const struct kd_rect *damage);
/* keydraw.resize=1: watch for the connector's preferred mode to change
 * (uevents, and a slow poll), then call kd_drm_follow every frame. */
void kd_drm_follow_start(struct kd_fb *fb);
void kd_drm_follow(struct kd_fb *fb);

/* keydraw-draw.c: everything that puts pixels into the framebuffer. */
void kd_draw_background(struct kd_fb *fb);
uint32_t kd_keybox_color(unsigned presses);
void kd_draw_keybox(struct kd_fb *fb, unsigned presses);
void kd_activity_init(struct kd_fb *fb, enum kd_mode mode);
bool kd_activity_frame(struct kd_fb *fb, enum kd_mode mode, uint64_t frame,
                       struct kd_rect *damage);

/* keydraw-input.c: the evdev reader thread. */
void kd_input_start(struct kd_fb *fb);

/* keydraw-agent.c: the vdagent thread (keydraw.agent=1 toward qemu's
 * vdagent, keydraw.agent=spice toward a SPICE server's agent port). */
void kd_agent_start(bool spice);

/* keydraw-echo.c: keydraw.echo=NAME, echoes the virtio-serial port NAME
 * (ECHO lines; keydraw.echo_mode=hold never reads it, =flood writes a
 * known byte stream to it); and the /dev node of port NAME, if the guest has it, or
 * once it has (the name comes after the driver probed the device, when
 * the host has told it), waiting at most wait_s. */
void kd_echo_start(void);
int kd_vport_find(const char *name, char *dev, size_t len);
int kd_vport_wait(const char *name, char *dev, size_t len, int wait_s);

/* keydraw-beep.c: keydraw.beep=HZ, a PC-speaker tone (2 s on, 1 s off). */
void kd_beep_start(void);

/* keydraw-usb.c: keydraw.usb=1, USB lines as devices are enumerated and
 * go ("USB add BUS-PORT VVVV:PPPP product=...", "USB remove ..."). */
void kd_usb_start(void);

/* keydraw-webdav.c: keydraw.webdav=FILE, a folder-sharing client on the
 * port org.spice-space.webdav.0: lists the shared folder (PROPFIND) and
 * reads FILE (GET), WEBDAV lines. */
void kd_webdav_start(void);
/* keydraw-ccid.c: keydraw.ccid=1, CCID over usbfs to qemu's usb-ccid
 * reader: CCID lines (reader, slot, ATR, one APDU's answer). */
void kd_ccid_start(void);
/* keydraw-webdav-sha256.c: the lowercase hex SHA-256 of data. */
void kd_sha256_hex(const uint8_t *data, size_t len, char out[65]);

/* keydraw-record.c: keydraw.record=1, captures from /dev/dsp (AC97) and
 * prints RECORD lines with the pitch and level of every 0.5 s. */
void kd_record_start(void);

#endif
