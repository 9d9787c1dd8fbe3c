/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The launcher's side of systemd: the unit name of a domain's console
 * (qemu-spice@UUID.service: the domain's UUID is an instance name as it
 * is, where a domain name would need systemd's escaping), whether systemd
 * runs the host, and a bounded 'systemctl' call. */
#pragma once

#include <glib.h>

/* How long the hook lets one 'systemctl --no-block' call take. */
#define QS_SYSTEMD_CTL_TIMEOUT_MS 10000

/* "qemu-spice@UUID.service" for a domain's UUID (any case; the name has it
 * in lower case), or NULL and an error when `uuid` is not one. */
char *qs_systemd_unit_name(const char *uuid, GError **error);
/* TRUE when systemd is the init system: the directory it creates at boot
 * (sd_booted(3)); ROOT_DIR is "/run/systemd/system" outside the tests. */
gboolean qs_systemd_booted(const char *root_dir);
/* systemctl by its absolute path: libvirtd runs hooks with a bare PATH. */
const char *qs_systemctl_path(void);
/* Runs SYSTEMCTL VERB --no-block UNIT, at most TIMEOUT_MS; an error holds
 * the command and systemctl's first line of stderr. */
gboolean qs_systemd_ctl(const char *systemctl, const char *verb,
                        const char *unit, guint timeout_ms, GError **error);
