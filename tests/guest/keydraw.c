/* SPDX-License-Identifier: GPL-2.0-or-later */
/* keydraw: the /init of the test guest; sets up the screen and paces frames. */
#define _GNU_SOURCE
#include "keydraw.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NSEC 1000000000LL

static const char *const mode_names[] = {
    [KD_MODE_IDLE] = "idle",
    [KD_MODE_BUSY] = "busy",
    [KD_MODE_HEAVY] = "heavy",
    [KD_MODE_TYPING] = "typing",
};

static enum kd_mode parse_mode(void)
{
    char buf[32];

    if (!kd_cmdline_get("keydraw.mode", buf, sizeof(buf)))
        return KD_MODE_IDLE;
    for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++) {
        if (strcmp(buf, mode_names[i]) == 0)
            return (enum kd_mode)i;
    }
    kd_say("WARN mode=%s unknown, using idle", buf);
    return KD_MODE_IDLE;
}

static int parse_fps(void)
{
    char buf[16];
    long fps;

    if (!kd_cmdline_get("keydraw.fps", buf, sizeof(buf)))
        return 30;
    fps = strtol(buf, NULL, 10);
    return fps < 1 ? 1 : fps > 240 ? 240 : (int)fps;
}

static long long ts_ns(const struct timespec *ts)
{
    return ts->tv_sec * NSEC + ts->tv_nsec;
}

static struct timespec ns_ts(long long ns)
{
    return (struct timespec){ .tv_sec = ns / NSEC, .tv_nsec = ns % NSEC };
}

static long long now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts_ns(&ts);
}

/* Absolute deadlines keep the rate exact; a frame that overruns skips the
 * missed deadlines instead of bursting to catch up. */
static void run(struct kd_fb *fb, enum kd_mode mode, int fps, bool resize)
{
    long long period = NSEC / fps;
    long long next = now_ns() + period;
    long long stat_at = now_ns() + NSEC, stat_t0 = now_ns();
    unsigned long long frame = 0, stat_frame = 0;
    long long work = 0;

    for (;;) {
        struct timespec dl = ns_ts(next);
        struct kd_rect damage;
        long long now, woke;

        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &dl, NULL) == EINTR)
            ;
        woke = now_ns();
        if (resize)
            kd_drm_follow(fb);
        if (kd_activity_frame(fb, mode, frame + 1, &damage)) {
            frame++;
            kd_drm_flush(fb, &damage);
        }

        now = now_ns();
        work += now - woke;
        next += period;
        if (next <= now)
            next += ((now - next) / period + 1) * period;
        if (now >= stat_at) {
            double secs = (double)(now - stat_t0) / NSEC;

            /* busy = share of the time spent drawing and flushing: tells a
             * slow guest from a slow host. */
            kd_say("FPS fps=%.1f frame=%llu busy=%.0f%%",
                   (double)(frame - stat_frame) / secs, frame,
                   100.0 * (double)work / (double)(now - stat_t0));
            work = 0;
            stat_t0 = now;
            stat_frame = frame;
            stat_at += NSEC;
            if (stat_at <= now)
                stat_at = now + NSEC;
        }
    }
}

/* Seconds since the kernel started: splits boot time into kernel and ours. */
static double uptime(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(void)
{
    struct kd_fb fb = { .fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER };
    double t_init = uptime();
    enum kd_mode mode;
    char buf[16];
    int fps;
    bool resize;

    kd_boot();
    double t_modules = uptime();
    mode = parse_mode();
    fps = parse_fps();
    fb.full_flush = kd_cmdline_get("keydraw.flush", buf, sizeof(buf)) &&
                    strcmp(buf, "full") == 0;
    resize = kd_cmdline_get("keydraw.resize", buf, sizeof(buf)) && strcmp(buf, "1") == 0;

    kd_drm_open(&fb);
    kd_activity_init(&fb, mode);
    kd_drm_flush(&fb, &(struct kd_rect){ KD_ACT_X, KD_ACT_Y, KD_ACT_W, KD_ACT_H });
    kd_input_start(&fb);
    if (resize)
        kd_drm_follow_start(&fb);

    kd_say("NOTE uptime init=%.2f modules=%.2f ready=%.2f", t_init, t_modules, uptime());
    kd_say("READY dev=%s w=%d h=%d mode=%s flush=%s keybox=%d,%d,%d,%d "
           "activity=%d,%d,%d,%d",
           fb.dev, KD_W, KD_H, mode_names[mode], fb.full_flush ? "full" : "damage",
           KD_KEYBOX_X, KD_KEYBOX_Y, KD_KEYBOX_SIZE, KD_KEYBOX_SIZE,
           KD_ACT_X, KD_ACT_Y, KD_ACT_W, KD_ACT_H);
    if (kd_cmdline_get("keydraw.agent", buf, sizeof(buf)) &&
        (strcmp(buf, "1") == 0 || strcmp(buf, "spice") == 0))
        kd_agent_start(strcmp(buf, "spice") == 0);
    kd_echo_start();
    kd_beep_start();
    kd_record_start();
    kd_usb_start();
    kd_webdav_start();
    kd_ccid_start();
    run(&fb, mode, fps, resize);
    return 0;
}
