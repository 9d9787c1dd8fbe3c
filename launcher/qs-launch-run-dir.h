/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The run directory, where each attached domain leaves its files (state,
 * pid, lock, tickets, control socket): their names, finding a domain's
 * state among them, and whether the processes it records still run. The
 * commands, the monitor and the hook all read it; it calls none of them. */
#pragma once

#include <glib.h>
#include "qs-launch-config.h"
#include "qs-launch-state.h"

/* File names for DOMAIN under the run and log directories. */
char *qs_run_path(const QsLaunchConfig *cfg, const char *domain,
                  const char *suffix);
char *qs_log_path(const QsLaunchConfig *cfg, const char *domain);
/* The view-only ticket file of a domain (it may not exist). */
char *qs_view_ticket_path(const QsLaunchConfig *cfg, const char *domain);
gboolean qs_domain_name_ok(const char *name, GError **error);

/* Finds the state of DOMAIN (a name, or the UUID recorded in a state file). */
QsLaunchState *qs_find_state(const QsLaunchConfig *cfg, const char *domain,
                             GError **error);
/* TRUE while a launcher (monitor) holds DOMAIN's lock. */
gboolean qs_domain_locked(const QsLaunchConfig *cfg, const char *domain);
gboolean qs_pid_alive(int pid);
