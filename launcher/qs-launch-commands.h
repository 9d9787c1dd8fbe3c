/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The launcher's commands that act on an attached console: detach, reload,
 * console and disconnect. attach, status, set-ticket, token and the hook
 * have their own files. */
#pragma once

#include <glib.h>
#include "qs-launch-config.h"

int qs_cmd_detach(QsLaunchConfig *cfg, const char *domain, gboolean wait);
/* SIGHUP to the monitor of DOMAIN (a name or its UUID): new certificates
 * and token keys for the running helper (the unit's ExecReload). */
int qs_cmd_reload(QsLaunchConfig *cfg, const char *domain);
/* `rights` "view": the view-only password (qs_view_password()); NULL or
 * "control": the ticket. --format url, and vv on a console that takes
 * tokens: a fresh single-use token with those rights for `ttl_s`; `qr`
 * (url only) adds the link as a QR code. */
int qs_cmd_console(QsLaunchConfig *cfg, const char *domain, const char *format,
                   const char *rights, gint ttl_s, gboolean qr);
int qs_cmd_disconnect(QsLaunchConfig *cfg, const char *domain, const char *address);
