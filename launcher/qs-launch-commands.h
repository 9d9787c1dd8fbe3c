/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The launcher's commands other than attach (which lives in the session). */
#pragma once

#include <glib.h>
#include "qs-launch-config.h"
#include "qs-launch-state.h"

/* "never", "+SECONDS" or "SECONDS" from now, "@UNIX_SECONDS". */
gboolean qs_parse_when(const char *s, gint64 now, gint64 *out, GError **error);

int qs_cmd_detach(QsLaunchConfig *cfg, const char *domain, gboolean wait);
/* SIGHUP to the monitor of DOMAIN (a name or its UUID): new certificates
 * and token keys for the running helper (the unit's ExecReload). */
int qs_cmd_reload(QsLaunchConfig *cfg, const char *domain);
int qs_cmd_status(QsLaunchConfig *cfg, const char *domain, gboolean json);
/* `rights` "view": the view-only password (qs_view_password()); NULL or
 * "control": the ticket. --format url, and vv on a console that takes
 * tokens: a fresh single-use token with those rights for `ttl_s`; `qr`
 * (url only) adds the link as a QR code. */
int qs_cmd_console(QsLaunchConfig *cfg, const char *domain, const char *format,
                   const char *rights, gint ttl_s, gboolean qr);
/* Gives the running helper a new ticket (it keeps the connected viewer
 * unless `disconnect`) and writes it to the ticket file. */
int qs_cmd_set_ticket(QsLaunchConfig *cfg, const char *domain,
                      const char *ticket_file, const char *expires,
                      gboolean disconnect);
/* set-ticket's first steps, for either ticket: the running console of
 * DOMAIN (not proxy-only) and the new password (from `ticket_file` or made)
 * with its expiry; NULL after one logged line. */
QsLaunchState *qs_ticket_command_start(QsLaunchConfig *cfg, const char *domain,
                                       const char *ticket_file, const char *expires,
                                       char **password, gint64 *expiry);
int qs_cmd_disconnect(QsLaunchConfig *cfg, const char *domain, const char *address);
/* The libvirt qemu hook (qs-launch-hook.c); ARGS: DOMAIN OPERATION ...
 * Always 0: a console problem must not stop a domain. */
int qs_cmd_hook(QsLaunchConfig *cfg, char **args);
/* The hook when the configuration did not load: logged and recorded
 * (in the default run directory) for the domain. */
int qs_cmd_hook_unconfigured(const char *config_error, char **args);
