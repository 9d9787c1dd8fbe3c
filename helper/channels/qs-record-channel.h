/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The record channel type (qs-record-channel.c). */
#pragma once

#include "channels/qs-channel.h"
#include "channels/qs-channel-context.h"

QsChannel *qs_record_channel_new(QsSession *session, QsConn *conn);
/* The guest records with `state`'s format / stopped recording. */
void qs_record_channel_start(QsChannel *ch, const QsRecordState *state);
void qs_record_channel_stop(QsChannel *ch);
void qs_record_channel_volume(QsChannel *ch, const QsAudioVolume *volume);
