/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The playback and record channels' server messages, and the sound format the playback channel sends. */
#pragma once

#include <glib.h>
#include <stdint.h>

/* What the playback channel sends: raw S16LE, interleaved stereo
 * (SPICE_AUDIO_FMT_S16, SPICE_AUDIO_DATA_MODE_RAW) at qemu's rate. */
#define QS_PLAYBACK_CHANNELS 2u
#define QS_PLAYBACK_BYTES_PER_FRAME 4u
/* PLAYBACK_DATA's u32 time in front of the sound. */
#define QS_PLAYBACK_DATA_HEADER 4u

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
