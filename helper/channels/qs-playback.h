/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sound channels' pure parts: qemu's PCM to SPICE's S16 stereo, and the playback and record channels' server messages. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "display/qs-audio-out.h"

/* What the playback channel sends: raw S16LE, interleaved stereo
 * (SPICE_AUDIO_FMT_S16, SPICE_AUDIO_DATA_MODE_RAW) at qemu's rate. */
#define QS_PLAYBACK_CHANNELS 2u
#define QS_PLAYBACK_BYTES_PER_FRAME 4u
/* PLAYBACK_DATA's u32 time in front of the sound. */
#define QS_PLAYBACK_DATA_HEADER 4u

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

/* PLAYBACK_MODE{u32 time; u16 mode} (no codec data). */
GBytes *qs_msg_playback_mode(uint32_t mm_time, uint16_t mode);
/* PLAYBACK_START{u32 channels; u16 format; u32 frequency; u32 time}. */
GBytes *qs_msg_playback_start(uint32_t channels, uint16_t format,
                              uint32_t frequency, uint32_t mm_time);
/* PLAYBACK_DATA{u32 time; data to the end}. */
GBytes *qs_msg_playback_data(uint32_t mm_time, GBytes *data);
/* PLAYBACK_VOLUME{u8 n; u16 volume[n]}; n is 1..255. */
GBytes *qs_msg_audio_volume(const uint16_t *volume, uint8_t n);
/* PLAYBACK_MUTE{u8 mute}. */
GBytes *qs_msg_audio_mute(gboolean mute);

/* RECORD_START{u32 channels; u16 format; u32 frequency}. */
GBytes *qs_msg_record_start(uint32_t channels, uint16_t format, uint32_t frequency);
/* S16LE stereo to S16LE mono: the mean of the two channels (a trailing
 * partial frame is dropped). */
GBytes *qs_pcm_s16_stereo_to_mono(GBytes *s16_stereo);
