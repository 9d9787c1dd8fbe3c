/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The client's recorded sound waiting for qemu's Read, handed out at the voice's real-time rate. */
#pragma once

#include <glib.h>
#include <stdint.h>

/*
 * qemu pulls captured sound (AudioInListener.Read) on its audio timer and
 * asks for as much as its buffer has room for: it leaves the rate to the
 * listener. So each Read gets what is due since the voice started, by the
 * clock, in whole frames: the client's sound while it has some, silence
 * while the client sends none (no client, or one that stopped), and
 * nothing when the client's next packet is merely late (what is due stays
 * owed). The client's sound waits here at most `max_ms`, the oldest
 * dropped first: a client whose clock runs fast costs no more latency.
 */
typedef struct QsAudioPace QsAudioPace;

/* A gap in the client's sound longer than this is treated as its absence. */
#define QS_AUDIO_PACE_STARVED_US 100000

/* `bytes_per_frame` >= 1, `bytes_per_second` a multiple of it (a format
 * qs_audio_format_check passed); `max_ms` >= 10. */
QsAudioPace *qs_audio_pace_new(uint32_t bytes_per_frame, uint32_t bytes_per_second,
                               uint32_t max_ms);
void qs_audio_pace_free(QsAudioPace *pace);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsAudioPace, qs_audio_pace_free)

/* The voice (re)starts: the clock starts at the next read, the waiting
 * sound goes. */
void qs_audio_pace_reset(QsAudioPace *pace);
/* The client's sound, in the voice's format (a trailing partial frame is
 * kept for the next push). */
void qs_audio_pace_push(QsAudioPace *pace, const uint8_t *data, gsize size,
                        int64_t now_us);
/* A Read of up to `size` bytes at `now_us`: fills `out` and returns how
 * many bytes (whole frames, <= size). */
gsize qs_audio_pace_read(QsAudioPace *pace, uint8_t *out, gsize size, int64_t now_us);

typedef struct {
    uint64_t pushed, read, silence, dropped;    /* bytes */
} QsAudioPaceStats;
void qs_audio_pace_get_stats(const QsAudioPace *pace, QsAudioPaceStats *stats);
