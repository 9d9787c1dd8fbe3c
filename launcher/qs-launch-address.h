/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An address for the console's host, for fields a proxy connects to as
 * given (Kerbside's hypervisor_ip): never a host name. */
#pragma once

#include <glib.h>
#include "qs-launch-config.h"
#include "qs-launch-state.h"

/* The address reported to clients when [listen] host does not name one: a
 * specific listen address; else [listen] public-address; else the address
 * this host sends from on its default route (IPv4, then IPv6); else the
 * first address of its interfaces that is not loopback or link-local; else
 * loopback. Never the host name, which Debian maps to 127.0.1.1. *FROM says
 * which (static text). */
char *qs_reported_address(const QsLaunchConfig *cfg, const char **from);

/* The reported host if it is an address, else a specific listen address,
 * else the host name resolved to an address that is not loopback, else the
 * default route's address, else the first such address of this host's
 * interfaces. *FROM says which (static text). Fails, naming [listen] host,
 * when there is none. */
char *qs_console_address(const QsLaunchState *st, const char **from,
                         GError **error);
