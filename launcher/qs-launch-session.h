/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One attached domain's session: what attach prepared (options, sockets,
 * lock, ticket, the files under the run directory) and what it publishes
 * (the state file, the console in the domain's metadata). attach fills it
 * in; the monitor loop (qs-launch-monitor.h) runs the helper with it. */
#pragma once

#include <sys/types.h>
#include <glib.h>
#include "qs-launch-config.h"
#include "qs-launch-domain.h"
#include "qs-launch-state.h"

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

typedef struct {
    QsLaunchConfig *cfg;
    QsAttachOptions opts;
    QsDomainInfo *info;
    QsLaunchState *st;
    char *password;
    int listen_fd;
    int tls_fd;
    int control_fd;           /* listening; the helper accepts on it */
    int lock_fd;
    int log_fd;
    uid_t uid;
    gid_t gid;
    char *state_path;
    char *pid_path;
    char *lock_path;
    char *control_path;
    char *tls_private;
    const char *host_from;      /* where the reported address came from */
    char *token_keys_path;    /* the helper's derived key file, or NULL */
    pid_t helper;
    guint child_watch;
    guint kill_timer;
    guint restart_timer;
    gboolean stopping;
    gboolean starting;        /* the first helper's liveness check runs */
    int start_status;         /* its wait status if it exited meanwhile */
    guint backoff_s;
    int exit_status;
    guint signals[4];
    GMainLoop *loop;
} Session;

void qs_session_free(Session *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Session, qs_session_free)

/* Sets (present) or removes the console in the domain's metadata. */
gboolean qs_session_publish(Session *s, gboolean present, GError **error);
gboolean qs_session_write_state(Session *s, GError **error);
/* Files only (attach failed before anything was published). */
void qs_session_remove_local_files(Session *s);
/* Metadata and files. */
void qs_session_cleanup(Session *s);
