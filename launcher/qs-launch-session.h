/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One attached domain: attach, the monitor that owns the helper, cleanup. */
#pragma once

#include <glib.h>
#include "qs-launch-config.h"

typedef struct {
    const char *ticket_file;   /* --ticket-file, or NULL: a random ticket */
    gint64 expiry;             /* -1: from the config; 0: never; else unix s */
    gboolean supervise;        /* restart the helper on abnormal exit */
    gboolean foreground;       /* stay in the foreground (systemd, hook) */
    guint wait_s;              /* wait this long for the domain/libvirt */
    gboolean syslog;           /* log to syslog (detached by the hook) */
    gboolean hook;             /* started by the hook: a failure is recorded
                                * for 'status' (nobody reads our stderr) */
    gboolean systemd;          /* the main process of qemu-spice@DOMAIN
                                * (--systemd): recorded like the hook's */
} QsAttachOptions;

/* Returns the process exit status. */
int qs_attach(QsLaunchConfig *cfg, const char *domain,
              const QsAttachOptions *opts);
