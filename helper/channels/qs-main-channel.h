/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The main channel type (qs-main-channel.c). */
#pragma once

#include "channels/qs-channel.h"

QsChannel *qs_main_channel_new(QsSession *session, QsConn *conn);
/* Sends the channel list if it is held for qemu's audio answers. */
void qs_main_channel_release_list(QsChannel *ch);
