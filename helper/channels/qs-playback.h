/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sound channels' conversions: qemu's PCM to SPICE's S16 stereo, the recorded stereo to mono, qemu's volume to SPICE's. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "wire/qs-playback-msg.h"
#include "display/qs-audio-out.h"

/* Whole frames of `pcm` in `format` (checked by qs_audio_format_check) as
 * S16LE stereo: mono is doubled, channels beyond two are left out, wider
 * samples keep their top 16 bits, floats are clamped. A trailing partial
 * frame is dropped. Never NULL (empty when no whole frame). */
GBytes *qs_pcm_to_s16_stereo(const QsAudioFormat *format, GBytes *pcm);

/* qemu's per-channel volume 0..255 as SPICE's 0..65535. */
uint16_t qs_playback_volume_from_qemu(uint8_t volume);

/* A voice's volume as qemu last set it, on SPICE's scale (VOLUME, MUTE). */
typedef struct {
    gboolean known;             /* qemu has set one */
    gboolean mute;
    uint8_t n;                  /* channels, 1..8 */
    uint16_t volume[8];
} QsAudioVolume;

/* qemu's SetVolume: `n` values 0..255 (beyond 8 ignored); FALSE, and no
 * change, when n is 0. */
gboolean qs_audio_volume_set(QsAudioVolume *v, gboolean mute, const uint8_t *volume,
                             guint n);

/* S16LE stereo to S16LE mono: the mean of the two channels (a trailing
 * partial frame is dropped). */
GBytes *qs_pcm_s16_stereo_to_mono(GBytes *s16_stereo);
