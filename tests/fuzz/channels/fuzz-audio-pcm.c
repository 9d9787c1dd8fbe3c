/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: qemu's AudioOutListener.Init arguments (validated) and Write data converted to S16 stereo, to 48 kHz and to Opus. */
#include "channels/qs-playback.h"
#include "encode/qs-audio-opus.h"
#include "encode/qs-audio-resample.h"
#include "wire/qs-wire.h"

/*
 * Input: u8 bits; u8 flags (bit 0 signed, 1 float, 2 big-endian);
 * u32 freq; u8 nchannels; u32 bytes_per_frame; u32 bytes_per_second (LE),
 * then the PCM of one Write.
 */
#define HEADER 15

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    QsAudioFormat f;
    GError *error = NULL;
    GBytes *pcm, *out;
    size_t frames;

    if (size < HEADER) {
        return 0;
    }
    f = (QsAudioFormat){
        .bits = data[0],
        .is_signed = (data[1] & 1) != 0,
        .is_float = (data[1] & 2) != 0,
        .be = (data[1] & 4) != 0,
        .freq = qs_wire_get_u32(data + 2),
        .nchannels = data[6],
        .bytes_per_frame = qs_wire_get_u32(data + 7),
        .bytes_per_second = qs_wire_get_u32(data + 11),
    };
    if (!qs_audio_format_check(&f, &error)) {
        g_error_free(error);
        return 0;
    }
    pcm = g_bytes_new(data + HEADER, size - HEADER);
    out = qs_pcm_to_s16_stereo(&f, pcm);
    frames = (size - HEADER) / f.bytes_per_frame;
    if (g_bytes_get_size(out) != frames * QS_PLAYBACK_BYTES_PER_FRAME) {
        __builtin_trap();
    }
    {
        /* The playback channel's Opus path at any rate qemu may announce. */
        QsResampler *rs = qs_resampler_new(f.freq, 48000);
        GBytes *at48 = qs_resampler_run(rs, out);
        QsOpusEnc *enc = qs_opus_enc_new(48000, NULL);
        GPtrArray *packets = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);

        if (g_bytes_get_size(at48) / QS_PLAYBACK_BYTES_PER_FRAME >
            (uint64_t)frames * 48000 / f.freq + 2) {
            __builtin_trap();
        }
        qs_opus_enc_push(enc, at48, packets, NULL);
        g_ptr_array_unref(packets);
        qs_opus_enc_free(enc);
        g_bytes_unref(at48);
        qs_resampler_free(rs);
    }
    g_bytes_unref(out);
    g_bytes_unref(pcm);
    return 0;
}
