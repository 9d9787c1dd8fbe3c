/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The server state shared by the listeners (qs-server.c) and the link
 * stage of pending connections (qs-link-stage.c); net-internal. */
#pragma once

#include "net/qs-key-pool.h"
#include "net/qs-rate-limit.h"
#include "net/qs-server.h"
#include "net/qs-stream.h"
#include "net/qs-ticket.h"

typedef struct QsListener QsListener;

struct QsServer {
    QsServerCallbacks cb;
    gpointer user_data;
    QsListener *listeners[2]; /* plain, TLS */
    QsTlsCreds *creds;
    char *tls_dir;
    QsTicket *ticket;
    QsTicket *view_ticket;      /* a second password, for view-only clients */
    guint32 secure_mask;
    guint max_pending;
    guint max_pending_per_source;
    guint link_timeout_ms;
    guint auth_fail_delay_ms;
    GQueue pending;         /* of Pending, oldest first */
    GHashTable *per_source; /* source → count */
    QsKeyPool *keys;
    QsRateLimit *rate;      /* NULL: no per-source link rate limit */
    guint64 rate_refused;   /* links refused by it */
    guint64 evictions;
    gint64 log_window_start;
    guint log_count;
};

/* Takes `stream` (a freshly accepted connection from address `source`) into
 * the link stage, dropping the oldest pending link first if a limit is
 * reached. */
void qs_link_stage_start(QsServer *s, QsStream *stream, const char *source);
/* Drops every pending link (server shutdown). */
void qs_link_stage_drop_all(QsServer *s);
