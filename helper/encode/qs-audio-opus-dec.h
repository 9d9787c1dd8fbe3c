/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Opus from the record channel: one client packet in, S16 stereo PCM out. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "encode/qs-audio-opus.h"

/*
 * spice-gtk encodes what it records as Opus when the server offers it and
 * RECORD_START names a rate Opus codes: stereo whatever the channel count
 * (spice-common's snd_codec), one packet per RECORD_DATA. A packet is at
 * most 120 ms (RFC 6716), so one decode is bounded.
 */
typedef struct QsOpusDec QsOpusDec;

/* Stereo decoder at `freq`; NULL with QS_OPUS_ERROR_RATE when
 * !qs_opus_rate_ok(freq). */
QsOpusDec *qs_opus_dec_new(uint32_t freq, GError **error);
void qs_opus_dec_free(QsOpusDec *dec);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsOpusDec, qs_opus_dec_free)

/* One packet to S16LE interleaved stereo; NULL with QS_OPUS_ERROR_FAILED
 * naming libopus's complaint when the packet is not Opus. */
GBytes *qs_opus_dec_packet(QsOpusDec *dec, const uint8_t *packet, gsize size,
                           GError **error);
