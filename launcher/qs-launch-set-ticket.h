/* SPDX-License-Identifier: GPL-2.0-or-later */
/* set-ticket: the ticket (control), or the view-only ticket, of an attached
 * domain's running helper. */
#pragma once

#include <glib.h>
#include "qs-launch-config.h"

/* "never", "+SECONDS" or "SECONDS" from now, "@UNIX_SECONDS". */
gboolean qs_parse_when(const char *s, gint64 now, gint64 *out, GError **error);

/* Gives the running helper a new ticket (it keeps the connected viewer
 * unless `disconnect`) and writes it to the ticket file. */
int qs_cmd_set_ticket(QsLaunchConfig *cfg, const char *domain,
                      const char *ticket_file, const char *expires,
                      gboolean disconnect);
/* Gives the running helper a new view-only ticket (SetViewTicket) and keeps
 * it in DOMAIN.view-ticket for later restarts. */
int qs_cmd_set_view_ticket(QsLaunchConfig *cfg, const char *domain,
                           const char *ticket_file, const char *expires);
