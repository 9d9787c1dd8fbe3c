/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsOpusDec: libopus's decoder for the record channel, stereo, output bounded to one packet's 120 ms. */
#include "encode/qs-audio-opus-dec.h"

#include <opus.h>

#define CHANNELS 2
#define MAX_PACKET_MS 120

struct QsOpusDec {
    OpusDecoder *opus;
    guint max_frames;           /* MAX_PACKET_MS at the decoder's rate */
};

QsOpusDec *qs_opus_dec_new(uint32_t freq, GError **error)
{
    g_autoptr(QsOpusDec) dec = NULL;
    int err = OPUS_OK;

    if (!qs_opus_rate_check(freq, error)) {
        return NULL;
    }
    dec = g_new0(QsOpusDec, 1);
    dec->opus = opus_decoder_create((opus_int32)freq, CHANNELS, &err);
    if (!dec->opus || err != OPUS_OK) {
        g_set_error(error, QS_OPUS_ERROR, QS_OPUS_ERROR_FAILED,
                    "libopus cannot make a %u Hz stereo decoder: %s", freq,
                    opus_strerror(err));
        return NULL;
    }
    dec->max_frames = freq / 1000 * MAX_PACKET_MS;
    return g_steal_pointer(&dec);
}

void qs_opus_dec_free(QsOpusDec *dec)
{
    if (!dec) {
        return;
    }
    if (dec->opus) {
        opus_decoder_destroy(dec->opus);
    }
    g_free(dec);
}

GBytes *qs_opus_dec_packet(QsOpusDec *dec, const uint8_t *packet, gsize size,
                           GError **error)
{
    g_autofree int16_t *pcm = g_new(int16_t, (gsize)dec->max_frames * CHANNELS);
    uint8_t *out;
    int n;

    if (size == 0 || size > G_MAXINT32) {
        g_set_error(error, QS_OPUS_ERROR, QS_OPUS_ERROR_FAILED,
                    "an Opus packet of %" G_GSIZE_FORMAT " bytes", size);
        return NULL;
    }
    n = opus_decode(dec->opus, packet, (opus_int32)size, pcm, (int)dec->max_frames, 0);
    if (n < 0) {
        g_set_error(error, QS_OPUS_ERROR, QS_OPUS_ERROR_FAILED,
                    "libopus cannot decode a packet of %" G_GSIZE_FORMAT " bytes: %s",
                    size, opus_strerror(n));
        return NULL;
    }
    out = g_malloc((gsize)n * CHANNELS * 2);
    for (gsize i = 0; i < (gsize)n * CHANNELS; i++) {
        out[2 * i] = (uint8_t)((uint16_t)pcm[i] & 0xff);
        out[2 * i + 1] = (uint8_t)((uint16_t)pcm[i] >> 8);
    }
    return g_bytes_new_take(out, (gsize)n * CHANNELS * 2);
}
