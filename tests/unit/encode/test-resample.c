/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the playback rate conversion: length, pitch and level kept, and the same result however qemu cuts its writes. */
#include "encode/qs-audio-resample.h"

#include <math.h>
#include <string.h>

/* `frames` of a stereo sine (left `hz`, right silent) at `rate`. */
static GBytes *sine(uint32_t rate, double hz, guint frames)
{
    g_autofree uint8_t *p = g_malloc0(frames * 4u);

    for (guint i = 0; i < frames; i++) {
        int16_t v = (int16_t)lround(10000.0 * sin(2 * G_PI * hz * i / rate));

        p[i * 4] = (uint8_t)(v & 0xff);
        p[i * 4 + 1] = (uint8_t)((uint16_t)v >> 8);
    }
    return g_bytes_new(p, frames * 4u);
}

static int16_t left(GBytes *pcm, gsize i)
{
    const uint8_t *p = g_bytes_get_data(pcm, NULL);

    return (int16_t)(uint16_t)(p[i * 4] | (p[i * 4 + 1] << 8));
}

/* Runs `in` through a fresh resampler in writes of `chunk` frames. */
static GBytes *convert(uint32_t from, uint32_t to, GBytes *in, guint chunk)
{
    g_autoptr(QsResampler) rs = qs_resampler_new(from, to);
    GByteArray *out = g_byte_array_new();
    gsize frames = g_bytes_get_size(in) / 4;

    for (gsize at = 0; at < frames; at += chunk) {
        g_autoptr(GBytes) part = g_bytes_new_from_bytes(in, at * 4, MIN(chunk, frames - at) * 4);
        g_autoptr(GBytes) got = qs_resampler_run(rs, part);

        g_byte_array_append(out, g_bytes_get_data(got, NULL), (guint)g_bytes_get_size(got));
    }
    return g_byte_array_free_to_bytes(out);
}

/* qemu's 44100 Hz to Opus's 48000: a second stays a second, 440 Hz stays
 * 440 Hz at the same level. */
static void test_44100_to_48000(void)
{
    g_autoptr(GBytes) in = sine(44100, 440, 44100);
    g_autoptr(GBytes) out = convert(44100, 48000, in, 441);
    gsize n = g_bytes_get_size(out) / 4;
    guint crossings = 0;
    double energy = 0;

    g_assert_cmpuint(g_bytes_get_size(out) % 4, ==, 0);
    g_assert_cmpuint(n, >=, 47998);
    g_assert_cmpuint(n, <=, 48000);
    for (gsize i = 1; i < n; i++) {
        if ((left(out, i) >= 0) != (left(out, i - 1) >= 0)) {
            crossings++;
        }
        energy += (double)left(out, i) * left(out, i);
    }
    g_assert_cmpuint(crossings, >=, 878);
    g_assert_cmpuint(crossings, <=, 881);
    g_assert_cmpfloat(fabs(sqrt(energy / (n - 1)) - 10000 / G_SQRT2), <, 10000 / G_SQRT2 * 0.01);
    /* The right channel stays silent. */
    {
        const uint8_t *p = g_bytes_get_data(out, NULL);

        for (gsize i = 0; i < n; i++) {
            g_assert_cmpint(p[i * 4 + 2] | p[i * 4 + 3], ==, 0);
        }
    }
}

/* However qemu cuts its writes, the output is the same. */
static void test_chunking(void)
{
    g_autoptr(GBytes) in = sine(44100, 1000, 4410);
    g_autoptr(GBytes) whole = convert(44100, 48000, in, 4410);
    const guint chunks[] = { 1, 7, 441, 1000 };

    for (guint i = 0; i < G_N_ELEMENTS(chunks); i++) {
        g_autoptr(GBytes) cut = convert(44100, 48000, in, chunks[i]);

        g_assert_true(g_bytes_equal(whole, cut));
    }
}

static void test_edges(void)
{
    g_autoptr(QsResampler) rs = qs_resampler_new(48000, 48000);
    g_autoptr(GBytes) in = sine(48000, 440, 480);
    g_autoptr(GBytes) same = qs_resampler_run(rs, in);
    g_autoptr(GBytes) odd = g_bytes_new("\1\2\3", 3);
    g_autoptr(GBytes) none = qs_resampler_run(rs, odd);
    g_autoptr(GBytes) down = convert(48000, 8000, in, 480);

    g_assert_true(g_bytes_equal(in, same));     /* equal rates: the input */
    g_assert_cmpuint(g_bytes_get_size(none), ==, 0);
    g_assert_cmpuint(g_bytes_get_size(down) / 4, ==, 80);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/encode/resample/44100-to-48000", test_44100_to_48000);
    g_test_add_func("/encode/resample/chunking", test_chunking);
    g_test_add_func("/encode/resample/edges", test_edges);
    return g_test_run();
}
