/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The launcher's side of systemd: the unit name of a domain's console
 * (qemu-spice@INSTANCE.service, INSTANCE escaped as systemd-escape does),
 * whether systemd runs the host, and a bounded 'systemctl' call. */
#pragma once

#include <glib.h>

/* systemd's own limit on a unit name (UNIT_NAME_MAX). */
#define QS_SYSTEMD_UNIT_NAME_MAX 255
/* How long the hook lets one 'systemctl --no-block' call take. */
#define QS_SYSTEMD_CTL_TIMEOUT_MS 10000

/* S escaped as 'systemd-escape S' does (not --path): '/' becomes '-',
 * [A-Za-z0-9:_.] stay (but a leading '.'), every other byte is \xNN. */
char *qs_systemd_escape(const char *s);
/* "qemu-spice@ESCAPED.service", or NULL and an error when the name would
 * be longer than systemd accepts. */
char *qs_systemd_unit_name(const char *domain, GError **error);
/* TRUE when systemd is the init system: the directory it creates at boot
 * (sd_booted(3)); ROOT_DIR is "/run/systemd/system" outside the tests. */
gboolean qs_systemd_booted(const char *root_dir);
/* systemctl by its absolute path: libvirtd runs hooks with a bare PATH. */
const char *qs_systemctl_path(void);
/* Runs SYSTEMCTL VERB --no-block UNIT, at most TIMEOUT_MS; an error holds
 * the command and systemctl's first line of stderr. */
gboolean qs_systemd_ctl(const char *systemctl, const char *verb,
                        const char *unit, guint timeout_ms, GError **error);
