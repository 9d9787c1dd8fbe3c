/* SPDX-License-Identifier: GPL-2.0-or-later */
/* keydraw.record=1: captures from the AC97 card's /dev/dsp and reports pitch and level, for the audio-input tests. */
#define _GNU_SOURCE
#include "keydraw.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/soundcard.h>
#include <time.h>
#include <unistd.h>

#define DSP "/dev/dsp"
#define MIXER "/dev/mixer"
/* spice-server's default record format (SPICE_INTERFACE_RECORD_FREQ/_CHAN). */
#define WANT_RATE 44100
#define WANT_CHANNELS 2
/* The card's probe runs inside the module load, but devtmpfs creates the
 * node a little later; under TCG on a loaded host both can take seconds. */
#define DSP_WAIT_S 20
/* A reader blocked this long means the card's DMA is not moving: said once
 * a stall so that a test sees why no RECORD lines come; it keeps waiting. */
#define STALL_MS 5000
/* /modules/order: screen, @ready input, @agent agent, @sound sound. */
#define SOUND_PHASE 3

struct rec {
    int fd;
    unsigned rate;
    unsigned channels;
};

static struct rec rec;

static double uptime(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The first line of /proc/asound/cards tells "no card" (no -device AC97)
 * from "card there but no OSS node". */
static void say_cards(void)
{
    char line[200] = "";
    FILE *f = fopen("/proc/asound/cards", "re");

    if (!f) {
        kd_say("NOTE record /proc/asound/cards missing errno=%d (snd not loaded?)", errno);
        return;
    }
    if (!fgets(line, sizeof(line), f))
        line[0] = '\0';
    fclose(f);
    line[strcspn(line, "\r\n")] = '\0';
    kd_say("NOTE record cards: %s", line[0] ? line : "(empty)");
}

/* qemu's AC97 scales captured sound by the codec's record gain (0 = silence,
 * 15 = unity, not the +22.5 dB of real hardware) and ALSA leaves it at 0 or
 * muted, so without this everything recorded would read as silence. The OSS
 * "igain" slot is ALSA's Capture volume and switch. */
static void open_capture_gain(void)
{
    int fd = open(MIXER, O_RDWR | O_CLOEXEC);
    int vol = 100 | 100 << 8;

    if (fd < 0) {
        kd_say("NOTE record %s errno=%d: capture gain left as is", MIXER, errno);
        return;
    }
    if (ioctl(fd, SOUND_MIXER_WRITE_IGAIN, &vol) < 0)
        kd_say("NOTE record igain errno=%d: capture gain left as is", errno);
    else
        kd_say("NOTE record igain=%d:%d", vol & 0xff, (vol >> 8) & 0xff);
    close(fd);
}

static bool wait_for_dsp(void)
{
    struct timespec t0, now;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (access(DSP, F_OK) != 0) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec >= DSP_WAIT_S)
            return false;
        usleep(50 * 1000);
    }
    return true;
}

/* OSS wants format, then channels, then rate; each ioctl writes back what
 * the driver granted, which may differ from what was asked. */
static bool setup_dsp(struct rec *r)
{
    int fmt = AFMT_S16_LE, ch = WANT_CHANNELS, rate = WANT_RATE;

    r->fd = open(DSP, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        kd_say("NOTE record open %s errno=%d: no recording", DSP, errno);
        return false;
    }
    if (ioctl(r->fd, SNDCTL_DSP_SETFMT, &fmt) < 0 || fmt != AFMT_S16_LE) {
        kd_say("NOTE record format S16_LE refused (granted %#x errno=%d): no recording",
               fmt, errno);
        goto fail;
    }
    if (ioctl(r->fd, SNDCTL_DSP_CHANNELS, &ch) < 0 || ch < 1 || ch > 8) {
        kd_say("NOTE record channels=%d refused (granted %d errno=%d): no recording",
               WANT_CHANNELS, ch, errno);
        goto fail;
    }
    if (ioctl(r->fd, SNDCTL_DSP_SPEED, &rate) < 0 || rate < 1000 || rate > 384000) {
        kd_say("NOTE record rate=%d refused (granted %d errno=%d): no recording",
               WANT_RATE, rate, errno);
        goto fail;
    }
    if (ch != WANT_CHANNELS || rate != WANT_RATE)
        kd_say("NOTE record asked rate=%d channels=%d, granted rate=%d channels=%d",
               WANT_RATE, WANT_CHANNELS, rate, ch);
    r->rate = (unsigned)rate;
    r->channels = (unsigned)ch;
    return true;
fail:
    close(r->fd);
    r->fd = -1;
    return false;
}

/* Pitch from rising crossings of the mean: the time between the first and
 * the last one over the count in between gives fractions of a hertz, which
 * counting crossings in a half-second window would not. A crossing only
 * counts once the signal has been a quarter of the peak below the mean and
 * then as far above it, so that noise near the mean adds none. */
static void report(unsigned n, const int16_t *x, size_t len, unsigned rate)
{
    double sum = 0, mean, peak = 0, th, hz = 0;
    size_t first = 0, last = 0, rising = 0;
    int side = 0;

    for (size_t i = 0; i < len; i++)
        sum += x[i];
    mean = sum / (double)len;
    for (size_t i = 0; i < len; i++) {
        double d = x[i] > mean ? x[i] - mean : mean - x[i];

        if (d > peak)
            peak = d;
    }
    th = peak / 4;
    for (size_t i = 0; i < len; i++) {
        double d = x[i] - mean;
        int s = d > th ? 1 : d < -th ? -1 : 0;

        if (s == 0 || s == side)
            continue;
        if (side == -1) {
            if (rising++ == 0)
                first = i;
            last = i;
        }
        side = s;
    }
    if (rising >= 2 && last > first)
        hz = (double)(rising - 1) * rate / (double)(last - first);
    kd_say("RECORD n=%u hz=%.1f peak=%.0f", n, hz, peak);
}

static void record_loop(struct rec *r)
{
    size_t frame_bytes = 2 * r->channels;
    size_t window = r->rate / 2;        /* 0.5 s, the RECORD line period */
    int16_t *left = malloc(window * sizeof(*left));
    unsigned char buf[8192];
    size_t have = 0, filled = 0;
    unsigned n = 0;
    bool stalled = false;

    if (!left) {
        kd_say("NOTE record out of memory: no recording");
        close(r->fd);
        r->fd = -1;
        return;
    }
    for (;;) {
        struct pollfd pfd = { .fd = r->fd, .events = POLLIN };
        ssize_t got;
        size_t frames;
        int pr = poll(&pfd, 1, STALL_MS);

        if (pr < 0 && errno != EINTR) {
            kd_say("NOTE record poll errno=%d: recording stopped", errno);
            break;
        }
        if (pr == 0) {
            if (!stalled)
                kd_say("NOTE record no sound for %d ms (card not capturing?)", STALL_MS);
            stalled = true;
            continue;
        }
        if (pr < 0)
            continue;
        got = read(r->fd, buf + have, sizeof(buf) - have);
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            kd_say("NOTE record read errno=%d: recording stopped", errno);
            break;
        }
        if (got == 0) {
            kd_say("NOTE record read end of file: recording stopped");
            break;
        }
        stalled = false;
        have += (size_t)got;
        /* The driver may hand back part of a frame; it waits for the rest. */
        frames = have / frame_bytes;
        for (size_t f = 0; f < frames; f++) {
            const unsigned char *p = buf + f * frame_bytes;

            left[filled++] = (int16_t)(p[0] | p[1] << 8);
            if (filled == window) {
                report(++n, left, window, r->rate);
                filled = 0;
            }
        }
        memmove(buf, buf + frames * frame_bytes, have - frames * frame_bytes);
        have -= frames * frame_bytes;
    }
    free(left);
    close(r->fd);
    r->fd = -1;
}

/* Everything, module loading included, runs off the main thread so that
 * frames keep coming while the card probes. */
static void *record_thread(void *arg)
{
    double t0 = uptime(), t_mod;

    (void)arg;
    kd_load_modules(SOUND_PHASE);
    t_mod = uptime();
    if (!wait_for_dsp()) {
        kd_say("NOTE record %s did not appear in %d s: no recording", DSP, DSP_WAIT_S);
        say_cards();
        return NULL;
    }
    open_capture_gain();
    if (!setup_dsp(&rec))
        return NULL;
    kd_say("NOTE record uptime start=%.2f modules=%.2f ready=%.2f", t0, t_mod, uptime());
    kd_say("RECORD ready rate=%u channels=%u", rec.rate, rec.channels);
    record_loop(&rec);
    return NULL;
}

void kd_record_start(void)
{
    char buf[16];
    pthread_t tid;

    if (!kd_cmdline_get("keydraw.record", buf, sizeof(buf)) || strcmp(buf, "1") != 0)
        return;
    if (pthread_create(&tid, NULL, record_thread, NULL) != 0) {
        kd_say("NOTE record pthread_create failed: no recording");
        return;
    }
    pthread_detach(tid);
}
