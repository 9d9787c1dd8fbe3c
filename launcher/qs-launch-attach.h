/* SPDX-License-Identifier: GPL-2.0-or-later */
/* attach: one domain's console, from its checks to the monitor that owns
 * the helper. */
#pragma once

#include "qs-launch-config.h"
#include "qs-launch-session.h"

/* Returns the process exit status. */
int qs_attach(QsLaunchConfig *cfg, const char *domain,
              const QsAttachOptions *opts);
