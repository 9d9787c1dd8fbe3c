/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Opus for the playback channel: 10 ms stereo packets at qemu's rate, when that rate is one Opus codes. */
#include "encode/qs-audio-opus.h"

#include <opus.h>
#include <string.h>

#define CHANNELS 2
/* The largest packet libopus makes for one frame (RFC 6716, 3.2.1). */
#define MAX_PACKET 1275
/* Lower than libopus's default of 10: the helper runs beside every VM, and
 * at 96 kbit/s the step down is not one a console's sound needs. */
#define COMPLEXITY 5

G_DEFINE_QUARK(qs-opus-error-quark, qs_opus_error)

struct QsOpusEnc {
    OpusEncoder *opus;
    guint frame_size;           /* frames per packet */
    int16_t *pending;           /* frame_size * CHANNELS samples */
    guint n_pending;            /* frames in `pending` */
};

gboolean qs_opus_rate_ok(uint32_t freq)
{
    return freq == 48000 || freq == 24000 || freq == 16000 || freq == 12000 ||
           freq == 8000;
}

gboolean qs_opus_rate_check(uint32_t freq, GError **error)
{
    if (!qs_opus_rate_ok(freq)) {
        g_set_error(error, QS_OPUS_ERROR, QS_OPUS_ERROR_RATE,
                    "%u Hz is not a rate Opus codes (48000, 24000, 16000, 12000 or 8000)",
                    freq);
        return FALSE;
    }
    return TRUE;
}

QsOpusEnc *qs_opus_enc_new(uint32_t freq, GError **error)
{
    g_autoptr(QsOpusEnc) enc = NULL;
    int err = OPUS_OK;

    if (!qs_opus_rate_check(freq, error)) {
        return NULL;
    }
    enc = g_new0(QsOpusEnc, 1);
    /* Restricted low delay: 2.5 ms of look-ahead instead of 6.5; a console's
     * sound is heard beside the picture it belongs to. */
    enc->opus = opus_encoder_create((opus_int32)freq, CHANNELS,
                                    OPUS_APPLICATION_RESTRICTED_LOWDELAY, &err);
    if (!enc->opus || err != OPUS_OK) {
        g_set_error(error, QS_OPUS_ERROR, QS_OPUS_ERROR_FAILED,
                    "libopus cannot make a %u Hz stereo encoder: %s", freq,
                    opus_strerror(err));
        return NULL;
    }
    if (opus_encoder_ctl(enc->opus, OPUS_SET_BITRATE(QS_OPUS_BITRATE)) != OPUS_OK ||
        opus_encoder_ctl(enc->opus, OPUS_SET_COMPLEXITY(COMPLEXITY)) != OPUS_OK) {
        g_set_error(error, QS_OPUS_ERROR, QS_OPUS_ERROR_FAILED,
                    "libopus refuses a bitrate of %d or a complexity of %d",
                    QS_OPUS_BITRATE, COMPLEXITY);
        return NULL;
    }
    enc->frame_size = freq / 100;
    enc->pending = g_new0(int16_t, enc->frame_size * CHANNELS);
    return g_steal_pointer(&enc);
}

void qs_opus_enc_free(QsOpusEnc *enc)
{
    if (!enc) {
        return;
    }
    if (enc->opus) {
        opus_encoder_destroy(enc->opus);
    }
    g_free(enc->pending);
    g_free(enc);
}

guint qs_opus_enc_frame_size(const QsOpusEnc *enc)
{
    return enc->frame_size;
}

gboolean qs_opus_enc_push(QsOpusEnc *enc, GBytes *s16_stereo, GPtrArray *packets,
                          GError **error)
{
    gsize size = 0;
    const uint8_t *in = g_bytes_get_data(s16_stereo, &size);
    gsize frames = size / (CHANNELS * sizeof(int16_t));
    gboolean ok = TRUE;

    for (gsize f = 0; f < frames; f++) {
        for (guint c = 0; c < CHANNELS; c++) {
            const uint8_t *s = in + (f * CHANNELS + c) * sizeof(int16_t);

            enc->pending[enc->n_pending * CHANNELS + c] = (int16_t)(s[0] | (s[1] << 8));
        }
        if (++enc->n_pending < enc->frame_size) {
            continue;
        }
        enc->n_pending = 0;

        uint8_t packet[MAX_PACKET];
        opus_int32 n = opus_encode(enc->opus, enc->pending, (int)enc->frame_size,
                                   packet, sizeof(packet));

        if (n < 0) {
            if (ok) {
                g_set_error(error, QS_OPUS_ERROR, QS_OPUS_ERROR_FAILED,
                            "libopus could not encode a packet: %s", opus_strerror(n));
            }
            ok = FALSE;
            continue;
        }
        g_ptr_array_add(packets, g_bytes_new(packet, (gsize)n));
    }
    return ok;
}

void qs_opus_enc_reset(QsOpusEnc *enc)
{
    enc->n_pending = 0;
    opus_encoder_ctl(enc->opus, OPUS_RESET_STATE);
}
