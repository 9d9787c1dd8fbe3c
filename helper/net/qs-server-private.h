/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The server state shared by the listeners (qs-server.c) and the link
 * stage of pending connections (qs-link-stage.c); net-internal. */
#pragma once

#include "net/qs-key-pool.h"
#include "net/qs-rate-limit.h"
#include "net/qs-server.h"
#include "net/qs-stream.h"
#include "net/qs-ticket.h"
#include "net/qs-token-verifier.h"
#include "net/qs-web.h"

typedef struct QsListener QsListener;

struct QsServer {
    QsServerCallbacks cb;
    gpointer user_data;
    QsListener *listeners[2]; /* plain, TLS */
    QsTlsCreds *creds;
    char *tls_dir;
    QsTicket *ticket;
    QsTicket *view_ticket;      /* a second password, for view-only clients */
    QsTokenVerifier *tokens;    /* signed console tokens, or NULL */
    QsWeb *web;                 /* the console page, or NULL: no page */
    gboolean auth_disabled;     /* --disable-ticketing */
    guint32 secure_mask;
    guint max_pending;
    guint max_pending_per_source;
    guint link_timeout_ms;
    guint auth_fail_delay_ms;
    GQueue pending;         /* of Pending, oldest first */
    GHashTable *per_source; /* source → count */
    QsKeyPool *keys;
    QsRateLimit *rate;      /* NULL: no per-source link rate limit */
    gint64 (*rate_clock)(void);
    guint64 rate_refused;   /* links refused by it */
    guint64 evictions;
    guint64 added;          /* sockets handed in by qs_server_add_client */
    gint64 log_window_start;
    guint log_count;
};

/* What a link's ticket bytes grant (qs-link-auth.c). */
typedef struct {
    gboolean ok;
    gboolean view_only;
    gboolean by_token;
    QsTokenUse token;       /* when by_token: commit it once linked */
    const char *why;        /* a refusal's reason for the log */
} QsLinkGrant;

void qs_link_auth_check(QsServer *s, const guint8 *password, gsize len,
                        guint8 channel_type, guint32 connection_id, QsLinkGrant *grant);
/* The link of a granted ticket succeeded as session `session_id`. */
void qs_link_auth_commit(QsServer *s, const QsLinkGrant *grant, guint32 session_id);

/* Would `token` link a new main channel now? Nothing is used up; without
 * token keys QS_TOKEN_NOT_A_TOKEN. */
QsTokenStatus qs_link_auth_token_state(QsServer *s, const char *token, gsize len);

/* A console-page request taken from a pending connection's stream
 * (qs-link-web.c): the answer is made (and a refused token logged) at once,
 * then written as the socket takes it. */
typedef struct QsWebExchange QsWebExchange;
QsWebExchange *qs_web_exchange_new(QsServer *s, QsStream *stream);
void qs_web_exchange_free(QsWebExchange *x);
QsStreamStatus qs_web_exchange_write(QsWebExchange *x, QsStream *stream, GError **error);
/* A file or the page went out (not a 404 or other refusal). */
gboolean qs_web_exchange_served(const QsWebExchange *x);

/* Link refusals are logged, but a scanner or a flood must not fill the
 * journal: FALSE once the window's share of lines is spent
 * (qs-link-limits.c). */
gboolean qs_link_log_allowed(QsServer *s);
/* One token of the per-source link rate limit; FALSE (counted, logged now
 * and then) if the source has none left. */
gboolean qs_link_charge(QsServer *s, const char *source);
/* Counting the unauthenticated connections of each source. */
void qs_link_limits_enter(QsServer *s, const char *source);
void qs_link_limits_leave(QsServer *s, const char *source);
/* The pending link (of s->pending, whose source `source_of` reads) that
 * must go to make room for one more from `source`, or NULL. */
gpointer qs_link_limits_victim(QsServer *s, const char *source,
                               const char *(*source_of)(gconstpointer pending));

/* The source every socket of qs_server_add_client counts as. */
#define QS_SERVER_ADDED_SOURCE "add-client"

/* Takes `stream` (a freshly accepted connection from address `source`) into
 * the link stage, dropping the oldest pending link first if a limit is
 * reached. `skip_auth`: the ticket field is read and not checked; the
 * link gets control rights. */
void qs_link_stage_start(QsServer *s, QsStream *stream, const char *source,
                         gboolean skip_auth);
/* Drops every pending link (server shutdown). */
void qs_link_stage_drop_all(QsServer *s);
