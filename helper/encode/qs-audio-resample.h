/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Rate conversion of S16 stereo PCM for the playback channel (qemu's 44100 Hz to the 48000 Hz Opus needs). */
#pragma once

#include <glib.h>
#include <stdint.h>

/*
 * Linear interpolation between neighbouring frames, continuous across
 * calls: the same method qemu's own mixer uses between a device's rate and
 * the audiodev's (audio/rate_template.h), so the sound loses nothing it had
 * not already lost on its way to us.
 */

typedef struct QsResampler QsResampler;

/* From `in_rate` to `out_rate` frames per second (both 1..192000). */
QsResampler *qs_resampler_new(uint32_t in_rate, uint32_t out_rate);
void qs_resampler_free(QsResampler *rs);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsResampler, qs_resampler_free)

/* S16LE interleaved stereo in (a trailing partial frame is ignored), the
 * same out at the output rate. Never NULL. */
GBytes *qs_resampler_run(QsResampler *rs, GBytes *s16_stereo);
