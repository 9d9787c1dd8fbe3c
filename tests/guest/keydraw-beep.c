/* SPDX-License-Identifier: GPL-2.0-or-later */
/* keydraw.beep=HZ: a PC-speaker tone, 2 s on and 1 s off, over and over, for the audio tests. */
#include "keydraw.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/io.h>
#include <time.h>
#include <unistd.h>

/* The PIT's input clock; channel 2 drives the speaker (qemu hw/audio/pcspk.c
 * turns its square wave into samples of the machine's pcspk-audiodev). */
#define PIT_HZ 1193182u
#define PIT_CH2 0x42
#define PIT_MODE 0x43
#define SPEAKER_PORT 0x61
#define ON_S 2
#define OFF_S 1

static unsigned beep_hz;

static void speaker(bool on)
{
    unsigned char v = inb(SPEAKER_PORT);

    /* Bit 0 gates PIT channel 2, bit 1 connects it to the speaker. */
    outb(on ? (v | 3) : (v & ~3), SPEAKER_PORT);
}

static void *beep_thread(void *arg)
{
    unsigned divisor = PIT_HZ / beep_hz;

    (void)arg;
    /* Channel 2, low then high byte, mode 3 (square wave). */
    outb(0xb6, PIT_MODE);
    outb(divisor & 0xff, PIT_CH2);
    outb((divisor >> 8) & 0xff, PIT_CH2);
    for (unsigned n = 1;; n++) {
        speaker(true);
        kd_say("BEEP on n=%u hz=%u", n, PIT_HZ / divisor);
        sleep(ON_S);
        speaker(false);
        kd_say("BEEP off n=%u", n);
        sleep(OFF_S);
    }
    return NULL;
}

void kd_beep_start(void)
{
    char buf[16];
    pthread_t tid;

    if (!kd_cmdline_get("keydraw.beep", buf, sizeof(buf)))
        return;
    beep_hz = (unsigned)strtoul(buf, NULL, 10);
    if (beep_hz < 20 || beep_hz > 20000) {
        kd_say("NOTE keydraw.beep=%s out of range (20..20000 Hz): no beep", buf);
        return;
    }
    if (ioperm(PIT_CH2, 2, 1) != 0 || ioperm(SPEAKER_PORT, 1, 1) != 0) {
        kd_say("NOTE ioperm failed: no beep");
        return;
    }
    if (pthread_create(&tid, NULL, beep_thread, NULL) != 0)
        kd_fail("pthread_create (beep)");
    pthread_detach(tid);
}
