/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The playback channel type (qs-playback-channel.c). */
#pragma once

#include "channels/qs-channel.h"
#include "channels/qs-playback.h"

QsChannel *qs_playback_channel_new(QsSession *session, QsConn *conn);
/* qemu's sound, from the context's owner: START at `freq` (a running
 * stream restarts), S16 stereo (START first at `freq` if stopped), STOP. */
void qs_playback_channel_start(QsChannel *ch, uint32_t freq);
void qs_playback_channel_data(QsChannel *ch, uint32_t freq, GBytes *s16_stereo);
void qs_playback_channel_stop(QsChannel *ch);
void qs_playback_channel_volume(QsChannel *ch, const QsAudioVolume *volume);
