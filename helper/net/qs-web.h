/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The console page: what a console port answers to a browser's GET that is
 * not a WebSocket upgrade. A fixed table in memory, never the filesystem. */
#pragma once

#include <glib.h>
#include "net/qs-http.h"
#include "net/qs-token.h"

G_BEGIN_DECLS

/*
 * The table: "/" (the page), "/qs/console.js" and "/qs/console.css" (its
 * script and style, built into the helper), "/qs/token-state" (whether the
 * token in the request's Authorization header would link, without using
 * it up) and "/spice-html5/NAME" for spice-html5's module files, read once
 * from its directory (Debian's package: /usr/share/spice-html5) when the
 * helper starts, before it confines itself: the top level's *.js and
 * *.css and thirdparty/'s *.js, regular files only, each and all of them
 * bounded. Any other path is a 404; a request is never turned into a file
 * name.
 *
 * spice-html5's files are kept gzipped and sent so to a browser that
 * accepts gzip (every one does), inflated to one that does not.
 *
 * Every answer closes the connection and carries the same strict headers:
 * a Content-Security-Policy that allows only this origin's scripts, styles
 * and connections (and data:/blob: images and media, which spice-html5's
 * cursor and sound use), no framing, no referrer, no caching (the page is
 * opened with a token), nosniff.
 */

#define QS_WEB_HTML5_DIR "/usr/share/spice-html5"
#define QS_WEB_MAX_FILES 64u
#define QS_WEB_MAX_FILE (512u * 1024)
#define QS_WEB_MAX_TOTAL (2u * 1024 * 1024)

typedef struct QsWeb QsWeb;

/* Reads spice-html5's files from `dir`. A missing spice-html5 is an error
 * when `required`; otherwise the page is a 503 that says it is not
 * installed, and qs_web_missing() says so for the log. */
QsWeb *qs_web_new(const char *dir, gboolean required, GError **error);
/* A table with the page's own files only; qs_web_add_file() adds the rest
 * (tests, the fuzz target). */
QsWeb *qs_web_new_empty(void);
/* `name` relative to spice-html5's directory, e.g. "main.js". */
void qs_web_add_file(QsWeb *web, const char *name, GBytes *data);
QsWeb *qs_web_ref(QsWeb *web);
void qs_web_unref(QsWeb *web);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsWeb, qs_web_unref)

guint qs_web_n_files(const QsWeb *web);
gsize qs_web_total_bytes(const QsWeb *web);
/* What spice-html5's files take in memory (gzipped). */
gsize qs_web_kept_bytes(const QsWeb *web);
/* Why spice-html5 is not served, or NULL. */
const char *qs_web_missing(const QsWeb *web);

/* Would `token` (len bytes) link now? QS_TOKEN_NOT_A_TOKEN when it is not a
 * token (or the helper takes none): the page then tries it as a password. */
typedef QsTokenStatus (*QsWebTokenCheck)(const char *token, gsize len, gpointer data);

typedef struct {
    guint status;           /* 200, 400, 404, 405, 503 (500: a file that
                             * did not inflate, which cannot happen) */
    GBytes *head;           /* status line and headers */
    GBytes *body;
    gboolean token_checked; /* a token-state request: */
    QsTokenStatus token;    /* what the check said */
} QsWebResponse;

void qs_web_respond(QsWeb *web, const QsHttpRequest *req, QsWebTokenCheck check,
                    gpointer data, QsWebResponse *resp);
void qs_web_response_clear(QsWebResponse *resp);

/* The state a token-state answer names: "valid", "ticket", "expired",
 * "used", "busy" or "wrong". */
const char *qs_web_token_state(QsTokenStatus status);

G_END_DECLS
