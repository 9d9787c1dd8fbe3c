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
/* The control surface on CONTROL_FD (-1: none) and, in bus mode (BUS not
 * NULL), on the VM's bus under its well-known name. */
QsControl *qs_helper_control_start(int control_fd, GDBusConnection *bus,
                                   QsHelperControl *hc, GError **error);
