/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The libvirt qemu hook's entry point (hook DOMAIN OPERATION ...). */
#pragma once

#include "qs-launch-config.h"

/* The libvirt qemu hook; ARGS: DOMAIN OPERATION ...
 * Always 0: a console problem must not stop a domain. */
int qs_cmd_hook(QsLaunchConfig *cfg, char **args);
/* The hook when the configuration did not load: logged and recorded
 * (in the default run directory) for the domain. */
int qs_cmd_hook_unconfigured(const char *config_error, char **args);
