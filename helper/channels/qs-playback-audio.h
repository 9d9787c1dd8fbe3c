/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Wires display's QsAudioOut (qemu's voices) to the channels' playback: which voice plays, in which format. */
#pragma once

#include "channels/qs-channels.h"
#include "display/qs-audio-out.h"

typedef struct QsPlaybackAudio QsPlaybackAudio;

/* Sets `out`'s funcs; free it before `out` and `channels`. */
QsPlaybackAudio *qs_playback_audio_new(QsChannels *channels, QsAudioOut *out);
void qs_playback_audio_free(QsPlaybackAudio *pa);
