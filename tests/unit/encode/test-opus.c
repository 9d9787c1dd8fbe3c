/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the sound channels' Opus: the encoder's packet framing and rates, and a tone through our decoder. */
#include "encode/qs-audio-opus-dec.h"
#include "encode/qs-audio-opus.h"

#include <math.h>
#include <opus.h>
#include <string.h>

#define RATE 48000u
#define TONE_HZ 440.0

/* `frames` of a stereo sine at TONE_HZ, amplitude 12000, from frame `start`. */
static GBytes *sine(guint start, guint frames)
{
    g_autofree uint8_t *p = g_malloc(frames * 4u);

    for (guint i = 0; i < frames; i++) {
        int16_t v = (int16_t)lround(12000.0 * sin(2 * G_PI * TONE_HZ * (start + i) / RATE));

        for (guint c = 0; c < 2; c++) {
            p[i * 4 + c * 2] = (uint8_t)(v & 0xff);
            p[i * 4 + c * 2 + 1] = (uint8_t)((uint16_t)v >> 8);
        }
    }
    return g_bytes_new(p, frames * 4u);
}

static void test_rates(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(QsOpusEnc) enc = NULL;
    const uint32_t ok[] = { 48000, 24000, 16000, 12000, 8000 };

    for (guint i = 0; i < G_N_ELEMENTS(ok); i++) {
        g_assert_true(qs_opus_rate_ok(ok[i]));
        enc = qs_opus_enc_new(ok[i], &error);
        g_assert_no_error(error);
        g_assert_cmpuint(qs_opus_enc_frame_size(enc), ==, ok[i] / 100);
        g_clear_pointer(&enc, qs_opus_enc_free);
    }
    g_assert_false(qs_opus_rate_ok(44100));
    g_assert_false(qs_opus_rate_ok(0));
    g_assert_null(qs_opus_enc_new(44100, &error));
    g_assert_error(error, QS_OPUS_ERROR, QS_OPUS_ERROR_RATE);
    g_assert_nonnull(strstr(error->message, "44100"));
}

/* Writes of any size make one packet per 10 ms; a partial frame is ignored;
 * a reset forgets what waited. */
static void test_framing(void)
{
    g_autoptr(QsOpusEnc) enc = qs_opus_enc_new(RATE, NULL);
    g_autoptr(GPtrArray) packets = g_ptr_array_new_with_free_func(
        (GDestroyNotify)g_bytes_unref);
    g_autoptr(GBytes) a = sine(0, 1000);
    g_autoptr(GBytes) b = sine(1000, 440);
    g_autoptr(GBytes) odd = g_bytes_new("\1\2\3", 3);
    g_autoptr(GError) error = NULL;

    g_assert_true(qs_opus_enc_push(enc, a, packets, &error));
    g_assert_cmpuint(packets->len, ==, 2);      /* 40 frames wait */
    g_assert_true(qs_opus_enc_push(enc, odd, packets, &error));
    g_assert_cmpuint(packets->len, ==, 2);
    g_assert_true(qs_opus_enc_push(enc, b, packets, &error));
    g_assert_cmpuint(packets->len, ==, 3);
    g_assert_no_error(error);
    for (guint i = 0; i < packets->len; i++) {
        gsize size = g_bytes_get_size(g_ptr_array_index(packets, i));

        /* 96 kbit/s is 120 bytes per 10 ms; never raw PCM's 1920. */
        g_assert_cmpuint(size, >, 0);
        g_assert_cmpuint(size, <=, 400);
    }
    qs_opus_enc_reset(enc);
    g_ptr_array_set_size(packets, 0);
    g_clear_pointer(&a, g_bytes_unref);
    a = sine(0, 479);
    g_assert_true(qs_opus_enc_push(enc, a, packets, &error));
    g_assert_cmpuint(packets->len, ==, 0);
}

/* What spice-gtk hears: decode every packet with libopus and count the
 * tone's zero crossings and its level in the second half. */
static void test_tone(void)
{
    g_autoptr(QsOpusEnc) enc = qs_opus_enc_new(RATE, NULL);
    g_autoptr(QsOpusDec) dec = qs_opus_dec_new(RATE, NULL);
    g_autoptr(GPtrArray) packets = g_ptr_array_new_with_free_func(
        (GDestroyNotify)g_bytes_unref);
    g_autoptr(GBytes) pcm = sine(0, RATE);      /* one second */
    g_autoptr(GError) error = NULL;
    g_autofree int16_t *out = g_new0(int16_t, RATE * 2);
    guint n = 0, crossings = 0;
    double energy = 0;

    /* Our encoder's packets through our decoder (the record channel's). */
    g_assert_nonnull(dec);
    g_assert_true(qs_opus_enc_push(enc, pcm, packets, NULL));
    g_assert_cmpuint(packets->len, ==, 100);
    for (guint i = 0; i < packets->len; i++) {
        gsize size, got;
        const uint8_t *p = g_bytes_get_data(g_ptr_array_index(packets, i), &size);
        g_autoptr(GBytes) frames = qs_opus_dec_packet(dec, p, size, NULL);
        const uint8_t *f = g_bytes_get_data(frames, &got);

        g_assert_cmpuint(got, ==, 480 * 4);
        for (gsize k = 0; k < got / 2; k++) {
            out[n * 2 + k] = (int16_t)(f[2 * k] | f[2 * k + 1] << 8);
        }
        n += (guint)(got / 4);
    }
    /* Not Opus, or nothing: an error naming it, no sound. */
    g_assert_null(qs_opus_dec_packet(dec, (const uint8_t[]){ 0xff, 0xff, 0xff }, 3, &error));
    g_assert_error(error, QS_OPUS_ERROR, QS_OPUS_ERROR_FAILED);
    g_clear_error(&error);
    g_assert_null(qs_opus_dec_packet(dec, NULL, 0, &error));
    g_assert_error(error, QS_OPUS_ERROR, QS_OPUS_ERROR_FAILED);
    g_assert_null(qs_opus_dec_new(44100, NULL));
    g_assert_cmpuint(n, ==, RATE);
    for (guint i = RATE / 2 + 1; i < RATE; i++) {
        if ((out[i * 2] >= 0) != (out[(i - 1) * 2] >= 0)) {
            crossings++;
        }
        energy += (double)out[i * 2] * out[i * 2];
    }
    /* Half a second of 440 Hz: 440 crossings; RMS of 12000 / sqrt(2). */
    g_assert_cmpuint(crossings, >=, 436);
    g_assert_cmpuint(crossings, <=, 444);
    g_assert_cmpfloat(sqrt(energy / (RATE / 2 - 1)), >, 12000 / G_SQRT2 * 0.8);
    g_assert_cmpfloat(sqrt(energy / (RATE / 2 - 1)), <, 12000 / G_SQRT2 * 1.2);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/encode/opus/rates", test_rates);
    g_test_add_func("/encode/opus/framing", test_framing);
    g_test_add_func("/encode/opus/tone", test_tone);
    return g_test_run();
}
