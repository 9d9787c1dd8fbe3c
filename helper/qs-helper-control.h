/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control surface's operations on this helper's server and channels. */
#pragma once

#include "channels/qs-channels.h"
#include "control/qs-control.h"
#include "net/qs-server.h"

typedef struct {
    QsServer *server;
    QsChannels *channels;
} QsHelperControl;

/* QsControlOps whose data is a QsHelperControl. */
const QsControlOps *qs_helper_control_ops(void);
