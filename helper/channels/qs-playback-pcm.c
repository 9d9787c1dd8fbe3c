/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qemu's PCM as the S16 stereo the playback channel sends, the recorded S16 stereo as mono, and qemu's volume on SPICE's scale. */
#include "channels/qs-playback.h"
#include "wire/qs-wire.h"

#include <math.h>
#include <string.h>

/* One sample of `f` at `p` as a signed 16-bit value. */
static int16_t sample_s16(const QsAudioFormat *f, const uint8_t *p)
{
    uint32_t u;
    float x;

    switch (f->bits) {
    case 8:
        return (int16_t)(f->is_signed ? (int16_t)((int8_t)p[0] * 256)
                                      : (int16_t)(((int)p[0] - 128) * 256));
    case 16:
        u = f->be ? (uint32_t)p[0] << 8 | p[1] : (uint32_t)p[1] << 8 | p[0];
        return (int16_t)(f->is_signed ? (int32_t)(int16_t)(uint16_t)u
                                      : (int32_t)u - 32768);
    default:
        u = f->be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
                  : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
        if (f->is_float) {
            memcpy(&x, &u, sizeof(x));
            x = isnan(x) ? 0.0f : CLAMP(x, -1.0f, 1.0f);
            return (int16_t)lrintf(x * 32767.0f);
        }
        if (!f->is_signed) {
            u ^= 0x80000000u;
        }
        return (int16_t)((int32_t)u >> 16);
    }
}

static void put_s16(uint8_t *q, int16_t v)
{
    q[0] = (uint8_t)((uint16_t)v & 0xff);
    q[1] = (uint8_t)((uint16_t)v >> 8);
}

GBytes *qs_pcm_to_s16_stereo(const QsAudioFormat *f, GBytes *pcm)
{
    gsize size = 0;
    const uint8_t *in = g_bytes_get_data(pcm, &size);
    gsize frames = f->bytes_per_frame ? size / f->bytes_per_frame : 0;
    guint sample = f->bits / 8u;
    uint8_t *out;

    if (frames == 0) {
        return g_bytes_new(NULL, 0);
    }
    if (f->bits == 16 && f->is_signed && !f->be && f->nchannels == 2) {
        return size == frames * 4 ? g_bytes_ref(pcm)
                                  : g_bytes_new_from_bytes(pcm, 0, frames * 4);
    }
    out = g_malloc(frames * QS_PLAYBACK_BYTES_PER_FRAME);
    for (gsize i = 0; i < frames; i++) {
        const uint8_t *p = in + i * f->bytes_per_frame;
        int16_t l = sample_s16(f, p);
        int16_t r = f->nchannels > 1 ? sample_s16(f, p + sample) : l;

        put_s16(out + i * 4, l);
        put_s16(out + i * 4 + 2, r);
    }
    return g_bytes_new_take(out, frames * QS_PLAYBACK_BYTES_PER_FRAME);
}

uint16_t qs_playback_volume_from_qemu(uint8_t volume)
{
    return (uint16_t)(volume * 257u);
}

gboolean qs_audio_volume_set(QsAudioVolume *v, gboolean mute, const uint8_t *volume,
                             guint n)
{
    if (n == 0) {
        return FALSE;
    }
    n = MIN(n, (guint)G_N_ELEMENTS(v->volume));
    for (guint i = 0; i < n; i++) {
        v->volume[i] = qs_playback_volume_from_qemu(volume[i]);
    }
    v->n = (uint8_t)n;
    v->mute = !!mute;
    v->known = TRUE;
    return TRUE;
}

GBytes *qs_pcm_s16_stereo_to_mono(GBytes *s16_stereo)
{
    gsize size = 0;
    const uint8_t *in = g_bytes_get_data(s16_stereo, &size);
    gsize frames = size / QS_PLAYBACK_BYTES_PER_FRAME;
    uint8_t *out = g_malloc(MAX(frames * 2, (gsize)1));

    for (gsize i = 0; i < frames; i++) {
        int32_t l = (int16_t)qs_wire_get_u16(in + i * 4);
        int32_t r = (int16_t)qs_wire_get_u16(in + i * 4 + 2);

        put_s16(out + i * 2, (int16_t)((l + r) / 2));
    }
    return g_bytes_new_take(out, frames * 2);
}
