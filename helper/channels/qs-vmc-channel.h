/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The spicevmc channel type (qs-vmc-channel.c): a port, webdav, usbredir or smartcard channel on one of the context's bridges. */
#pragma once

#include "channels/qs-channel.h"

/* Carries the bridge the session names for the link's type and id. */
QsChannel *qs_vmc_channel_new(QsSession *session, QsConn *conn);
