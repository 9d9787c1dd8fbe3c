/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of QsAudioPace: the client's recorded sound handed to qemu's Reads by the clock, silence only in its absence. */
#include "flow/qs-audio-pace.h"

#include <string.h>

/* S16 stereo at 44100 Hz: 4 bytes a frame, 1764 bytes per 10 ms. */
#define BPF 4u
#define BPS (44100u * BPF)
#define MS(n) ((int64_t)(n) * 1000)
#define BYTES_MS(n) ((gsize)BPS * (n) / 1000u)

/* Bytes whose values say where they came from: push number and offset. */
static uint8_t *sound(gsize size, uint8_t tag)
{
    uint8_t *p = g_malloc(size);

    for (gsize i = 0; i < size; i++) {
        p[i] = (uint8_t)(tag + i % 7);
    }
    return p;
}

static gboolean all_zero(const uint8_t *p, gsize n)
{
    for (gsize i = 0; i < n; i++) {
        if (p[i]) {
            return FALSE;
        }
    }
    return TRUE;
}

static void test_clock(void)
{
    g_autoptr(QsAudioPace) pace = qs_audio_pace_new(BPF, BPS, 200);
    g_autofree uint8_t *out = g_malloc(BYTES_MS(200));
    g_autofree uint8_t *in = sound(BYTES_MS(20), 1);
    QsAudioPaceStats st;

    /* No client yet: nothing is due at the first Read, then silence at the
     * voice's rate, never more than asked, in whole frames. */
    g_assert_cmpuint(qs_audio_pace_read(pace, out, 4096, MS(1000)), ==, 0);
    g_assert_cmpuint(qs_audio_pace_read(pace, out, 4096, MS(1010)), ==, BYTES_MS(10));
    g_assert_true(all_zero(out, BYTES_MS(10)));
    g_assert_cmpuint(qs_audio_pace_read(pace, out, 1001, MS(1030)), ==, 1000);
    g_assert_cmpuint(qs_audio_pace_read(pace, out, 4096, MS(1030)), ==, BYTES_MS(20) - 1000);

    /* The client's sound: in order, as much as is due. */
    qs_audio_pace_push(pace, in, BYTES_MS(20), MS(1030));
    g_assert_cmpuint(qs_audio_pace_read(pace, out, 4096, MS(1040)), ==, BYTES_MS(10));
    g_assert_cmpmem(out, BYTES_MS(10), in, BYTES_MS(10));
    g_assert_cmpuint(qs_audio_pace_read(pace, out, 4096, MS(1050)), ==, BYTES_MS(10));
    g_assert_cmpmem(out, BYTES_MS(10), in + BYTES_MS(10), BYTES_MS(10));

    /* Its next packet is late, not absent: nothing now, all of it owed. */
    g_assert_cmpuint(qs_audio_pace_read(pace, out, 4096, MS(1060)), ==, 0);
    qs_audio_pace_push(pace, in, BYTES_MS(20), MS(1065));
    g_assert_cmpuint(qs_audio_pace_read(pace, out, 8192, MS(1070)), ==, BYTES_MS(20));
    g_assert_cmpmem(out, BYTES_MS(20), in, BYTES_MS(20));

    /* Gone for longer than QS_AUDIO_PACE_STARVED_US: silence again. */
    g_assert_cmpuint(qs_audio_pace_read(pace, out, 8192, MS(1100)), ==, 0);
    g_assert_cmpuint(qs_audio_pace_read(pace, out, 32768, MS(1170)), ==, BYTES_MS(100));
    g_assert_true(all_zero(out, BYTES_MS(100)));

    qs_audio_pace_get_stats(pace, &st);
    g_assert_cmpuint(st.pushed, ==, BYTES_MS(40));
    g_assert_cmpuint(st.read, ==, BYTES_MS(170));
    g_assert_cmpuint(st.silence, ==, BYTES_MS(130));
    g_assert_cmpuint(st.dropped, ==, 0);
}

static void test_bounds(void)
{
    g_autoptr(QsAudioPace) pace = qs_audio_pace_new(BPF, BPS, 200);
    g_autofree uint8_t *out = g_malloc(BYTES_MS(1000));
    g_autofree uint8_t *in = sound(BYTES_MS(1000), 3);
    QsAudioPaceStats st;

    /* A second at once: 200 ms wait, the newest; the rest is dropped. */
    qs_audio_pace_push(pace, in, BYTES_MS(1000), 0);
    g_assert_cmpuint(qs_audio_pace_read(pace, out, BYTES_MS(1000), 0), ==, 0);
    g_assert_cmpuint(qs_audio_pace_read(pace, out, BYTES_MS(1000), MS(50)), ==, BYTES_MS(50));
    g_assert_cmpmem(out, BYTES_MS(50), in + BYTES_MS(800), BYTES_MS(50));
    qs_audio_pace_get_stats(pace, &st);
    g_assert_cmpuint(st.dropped, ==, BYTES_MS(800));

    /* qemu stops asking for 5 s (the VM was paused): at most 200 ms is
     * owed when it comes back, not 5 s of catching up. */
    g_assert_cmpuint(qs_audio_pace_read(pace, out, BYTES_MS(1000), MS(5050)), ==,
                     BYTES_MS(200));

    /* A reset (the voice restarts) forgets the clock and the sound. */
    qs_audio_pace_push(pace, in, BYTES_MS(10), MS(5050));
    qs_audio_pace_reset(pace);
    g_assert_cmpuint(qs_audio_pace_read(pace, out, BYTES_MS(1000), MS(6000)), ==, 0);
    g_assert_cmpuint(qs_audio_pace_read(pace, out, BYTES_MS(1000), MS(6010)), ==,
                     BYTES_MS(10));
    g_assert_true(all_zero(out, BYTES_MS(10)));
}

static void test_partial_frames(void)
{
    g_autoptr(QsAudioPace) pace = qs_audio_pace_new(BPF, BPS, 200);
    const uint8_t in[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
    uint8_t out[16];

    /* A frame split across packets is put together; a partial frame is
     * never handed out. */
    qs_audio_pace_push(pace, in, 3, 0);
    qs_audio_pace_push(pace, in + 3, 6, 0);
    qs_audio_pace_push(pace, in + 9, 1, 0);
    g_assert_cmpuint(qs_audio_pace_read(pace, out, sizeof(out), 0), ==, 0);
    g_assert_cmpuint(qs_audio_pace_read(pace, out, 7, MS(1)), ==, 4);
    g_assert_cmpmem(out, 4, in, 4);
    g_assert_cmpuint(qs_audio_pace_read(pace, out, sizeof(out), MS(1)), ==, 4);
    g_assert_cmpmem(out, 4, in + 4, 4);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/flow/audio-pace/clock", test_clock);
    g_test_add_func("/flow/audio-pace/bounds", test_bounds);
    g_test_add_func("/flow/audio-pace/partial-frames", test_partial_frames);
    return g_test_run();
}
