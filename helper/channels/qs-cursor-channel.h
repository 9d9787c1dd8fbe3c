/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The cursor channel type (qs-cursor-channel.c). */
#pragma once

#include "channels/qs-channel.h"

QsChannel *qs_cursor_channel_new(QsSession *session, QsConn *conn);
/* The head's cursor, or the session's mouse mode, changed. */
void qs_cursor_channel_changed(QsChannel *ch);
