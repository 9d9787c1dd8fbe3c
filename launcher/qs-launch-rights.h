/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What `console` hands a viewer besides the ticket: the view-only
 * password (console --rights view) and fresh signed tokens. The view-only
 * ticket itself is set-ticket's (qs-launch-set-ticket.h). */
#pragma once

#include <glib.h>
#include "qs-launch-config.h"
#include "qs-launch-state.h"

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
