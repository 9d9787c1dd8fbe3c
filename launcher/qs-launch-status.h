/* SPDX-License-Identifier: GPL-2.0-or-later */
/* status [DOMAIN]: what runs for one domain, or for every attached one. */
#pragma once

#include "qs-launch-config.h"

int qs_cmd_status(QsLaunchConfig *cfg, const char *domain, gboolean json);
