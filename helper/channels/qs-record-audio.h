/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Wires display's QsAudioIn (qemu's capture voices) to the channels' record channel: when to ask the client, in which format. */
#pragma once

#include "channels/qs-channels.h"
#include "display/qs-audio-in.h"

typedef struct QsRecordAudio QsRecordAudio;

/* Sets `in`'s funcs and the hub's record sink; free it before `in` and
 * `channels`. */
QsRecordAudio *qs_record_audio_new(QsChannels *channels, QsAudioIn *in);
void qs_record_audio_free(QsRecordAudio *ra);
