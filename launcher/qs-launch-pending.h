/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The hook's record of an attach it started (/run/qemu-spice/DOMAIN.hook):
 * what 'status' tells between libvirt's 'started' and the state file, and
 * after an attach that failed with nobody to read its error. Where systemd
 * runs the host the hook records the unit it asked for (pid 0 until the
 * unit's launcher writes its own record). */
#pragma once

#include <glib.h>
#include "qs-launch-config.h"

typedef struct {
    gboolean failed;     /* FALSE: the launcher is (or was) attaching */
    int pid;             /* the hook's launcher */
    gint64 since;        /* unix seconds of the hook (or of the failure) */
    char *error;         /* failed: the attach's one-line error */
    char *unit;          /* the systemd unit the hook started, or NULL */
} QsPending;

void qs_pending_free(QsPending *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsPending, qs_pending_free)

gboolean qs_pending_save(const QsLaunchConfig *cfg, const char *domain,
                         const QsPending *p, GError **error);
/* NULL when there is none (or it cannot be read). */
QsPending *qs_pending_load(const QsLaunchConfig *cfg, const char *domain);
/* Removes DOMAIN's record; with PID > 0 only a record of that launcher. */
void qs_pending_remove(const QsLaunchConfig *cfg, const char *domain, int pid);
/* One line for 'status': "DOMAIN: starting ..." or why it is not attached. */
char *qs_pending_describe(const QsLaunchConfig *cfg, const char *domain,
                          const QsPending *p, gboolean json);
/* 'status' exit code for it: 4 starting, 1 otherwise. */
int qs_pending_exit_code(const QsLaunchConfig *cfg, const QsPending *p);
