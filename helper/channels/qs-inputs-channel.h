/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The inputs channel type (qs-inputs-channel.c). */
#pragma once

#include "channels/qs-channel.h"

QsChannel *qs_inputs_channel_new(QsSession *session, QsConn *conn);
/* qemu's lock keys changed (the context's modifiers). */
void qs_inputs_channel_modifiers_changed(QsChannel *ch);
