/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The monitor's session: the state of one attached domain, shared by attach
 * (which prepares it) and the monitor loop (which owns the helper). */
#pragma once

#include <sys/types.h>
#include <glib.h>
#include "qs-launch-config.h"
#include "qs-launch-domain.h"
#include "qs-launch-session.h"
#include "qs-launch-state.h"

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
/* Starts the first helper and checks it survives its start-up. */
gboolean qs_session_start_first(Session *s, GError **error);
void qs_session_stop_helper(Session *s);
/* Files only (attach failed before anything was published). */
void qs_session_remove_local_files(Session *s);
/* Metadata and files. */
void qs_session_cleanup(Session *s);
/* SIGTERM/SIGINT detach, SIGUSR1 re-reads the ticket file (for restarts:
 * set-ticket gives the running helper the ticket itself), SIGHUP reloads TLS;
 * they stay installed until the session is freed. */
void qs_session_watch_signals(Session *s);
/* The monitor loop until the console ends; returns the exit status. */
int qs_session_run(Session *s);
