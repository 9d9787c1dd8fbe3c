/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The state file /run/qemu-spice/DOMAIN.json: what runs for a domain. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

typedef struct {
    char *domain;
    char *uuid;
    char *mode;          /* "p2p" or "bus" */
    int monitor_pid;     /* the launcher process that owns the helper */
    int helper_pid;
    char *host;          /* reported to clients */
    char *listen;        /* bound address */
    guint port;          /* 0: no plain port */
    guint tls_port;      /* 0: no TLS port */
    char *ticket_file;
    gint64 ticket_expiry;/* unix seconds, 0: never */
    gint64 started;      /* unix seconds of the current helper's start */
    gint64 attached;     /* unix seconds of the attach */
    guint restarts;
    gboolean supervise;
    char *log;
    char *tls_dir;       /* the helper's private copy, or NULL */
} QsLaunchState;

void qs_launch_state_free(QsLaunchState *st);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsLaunchState, qs_launch_state_free)

char *qs_launch_state_to_json(const QsLaunchState *st);
/* The state's members, into an object the caller has begun (status adds
 * its own after them). */
void qs_launch_state_add_members(const QsLaunchState *st, JsonBuilder *b);
QsLaunchState *qs_launch_state_from_json(const char *json, GError **error);
/* Written to a temporary file and renamed, so a reader never sees half. */
gboolean qs_launch_state_save(const QsLaunchState *st, const char *path,
                              GError **error);
QsLaunchState *qs_launch_state_load(const char *path, GError **error);
