/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The display channel type (qs-display-channel.c and its parts, qs-display-private.h). */
#pragma once

#include "channels/qs-channel.h"

QsChannel *qs_display_channel_new(QsSession *session, QsConn *conn);
/* The display plan's link estimate: bytes a second and smoothed RTT (0
 * when not measured yet). */
void qs_display_channel_link_estimate(QsChannel *ch, uint64_t *bytes_per_sec,
                                      uint32_t *srtt_us);
/* Sends while the plan has something (the screen changed). */
void qs_display_channel_pump(QsChannel *ch);
/* A frame of one of its streams is at an encoder and not answered yet
 * (a test waits for the answer before it moves its clock on). */
gboolean qs_display_channel_encoding(QsChannel *ch);
