/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Opus for the playback channel: S16 stereo PCM in, one SPICE PLAYBACK_DATA payload per 10 ms packet out. */
#pragma once

#include <glib.h>
#include <stdint.h>

/*
 * spice-gtk decodes each PLAYBACK_DATA of an OPUS-mode stream as one Opus
 * packet of up to 60 ms, stereo, at the rate PLAYBACK_START named, which
 * must be one Opus codes (48, 24, 16, 12 or 8 kHz; spice-common's
 * snd_codec). Packets here are 10 ms, the size of qemu's own D-Bus audio
 * writes at 48 kHz (its NSamples default of 480), so a packet rarely waits
 * for the next write.
 */

#define QS_OPUS_ERROR (qs_opus_error_quark())
GQuark qs_opus_error_quark(void);

typedef enum {
    QS_OPUS_ERROR_RATE,         /* not a rate Opus codes */
    QS_OPUS_ERROR_FAILED,       /* libopus refused */
} QsOpusError;

/* Bits per second the encoder aims at: a sixteenth of raw 48 kHz stereo. */
#define QS_OPUS_BITRATE 96000

typedef struct QsOpusEnc QsOpusEnc;

/* Is `freq` (frames per second) a rate Opus codes? */
gboolean qs_opus_rate_ok(uint32_t freq);
/* The same, with QS_OPUS_ERROR_RATE naming the rates when not. */
gboolean qs_opus_rate_check(uint32_t freq, GError **error);

/* Stereo encoder at `freq`; NULL with QS_OPUS_ERROR_RATE when
 * !qs_opus_rate_ok(freq). */
QsOpusEnc *qs_opus_enc_new(uint32_t freq, GError **error);
void qs_opus_enc_free(QsOpusEnc *enc);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsOpusEnc, qs_opus_enc_free)

/* Frames (per channel) in one packet: 10 ms at the encoder's rate. */
guint qs_opus_enc_frame_size(const QsOpusEnc *enc);

/* Takes S16LE interleaved stereo (a trailing partial frame is ignored) and
 * appends one GBytes per whole packet to `packets`, oldest first; what does
 * not fill a packet waits for the next call. FALSE with an error when
 * libopus fails on a packet (that packet is lost, the rest are kept). */
gboolean qs_opus_enc_push(QsOpusEnc *enc, GBytes *s16_stereo, GPtrArray *packets,
                          GError **error);

/* Forgets the waiting PCM and the codec's history (a new stream starts). */
void qs_opus_enc_reset(QsOpusEnc *enc);
