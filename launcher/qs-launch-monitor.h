/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The monitor loop: it owns the helper of an attached domain's session
 * (qs-launch-session.h), starts it, restarts it and acts on the signals
 * the commands send. */
#pragma once

#include <glib.h>
#include "qs-launch-session.h"

/* Starts the first helper and checks it survives its start-up. */
gboolean qs_session_start_first(Session *s, GError **error);
void qs_session_stop_helper(Session *s);
/* SIGTERM/SIGINT detach, SIGUSR1 re-reads the ticket file (for restarts:
 * set-ticket gives the running helper the ticket itself), SIGHUP reloads TLS;
 * they stay installed until the session is freed. */
void qs_session_watch_signals(Session *s);
/* The monitor loop until the console ends; returns the exit status. */
int qs_session_run(Session *s);
