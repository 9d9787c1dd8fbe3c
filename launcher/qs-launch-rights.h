/* SPDX-License-Identifier: GPL-2.0-or-later */
/* View-only consoles from the launcher: the view-only ticket
 * (set-ticket --rights view) and the view password a console reports
 * (console --rights view). */
#pragma once

#include <glib.h>
#include "qs-launch-config.h"
#include "qs-launch-state.h"

/* Gives the running helper a new view-only ticket (SetViewTicket) and keeps
 * it in DOMAIN.view-ticket for later restarts. */
int qs_cmd_set_view_ticket(QsLaunchConfig *cfg, const char *domain,
                           const char *ticket_file, const char *expires);

/* The view-only password of `st`'s console: its view-only ticket, else a
 * view token good for `ttl_s` when the host mints tokens. Sets *expiry
 * (0: never) and *source (the file, or "a signed token"). */
char *qs_view_password(const QsLaunchConfig *cfg, const QsLaunchState *st, gint ttl_s,
                       gint64 *expiry, char **source, GError **error);

/* Does `st`'s console take tokens (the host mints them and the helper was
 * given its keys at attach)? */
gboolean qs_console_takes_tokens(const QsLaunchConfig *cfg, const QsLaunchState *st);
/* A fresh single-use token for `st`'s console, view-only or with control,
 * good for `ttl_s` seconds (*expiry set); an error names what is missing
 * when the console takes no tokens. */
char *qs_console_token(const QsLaunchConfig *cfg, const QsLaunchState *st, gboolean view_only,
                       gint ttl_s, gint64 *expiry, GError **error);
