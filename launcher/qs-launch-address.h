/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An address for the console's host, for fields a proxy connects to as
 * given (Kerbside's hypervisor_ip): never a host name. */
#pragma once

#include <glib.h>
#include "qs-launch-state.h"

/* The reported host if it is an address, else a specific listen address,
 * else the host name resolved to an address that is not loopback, else the
 * first such address of this host's interfaces. *FROM says which (static
 * text). Fails, naming [listen] host, when there is none. */
char *qs_console_address(const QsLaunchState *st, const char **from,
                         GError **error);
