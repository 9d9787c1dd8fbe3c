/* SPDX-License-Identifier: GPL-2.0-or-later */
/* WebSocket (RFC 6455), server side: the upgrade request and the frames, without sockets. */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "net/qs-http.h"

G_BEGIN_DECLS

/*
 * Browsers (spice-html5) speak SPICE inside WebSocket binary frames. A
 * client whose first bytes are "GET " sends an HTTP upgrade request
 * (net/qs-http.h); once answered, its bytes arrive in masked frames and ours leave in unmasked
 * ones. Message boundaries carry no meaning for SPICE (websockify cut the
 * stream anywhere too), so frames are just a byte stream here.
 *
 * Why not libwslay: its event API copies each outgoing message into its
 * own queue (or pulls it through a callback at its own pace), so bytes
 * would wait where the helper's pacing cannot see them; the pacing
 * measures what sits in the kernel socket (flow/qs-pacer.c). Framing at the
 * granularity of our socket writes keeps that true, and the server side of
 * RFC 6455 that this needs is this file.
 */

#define QS_WS_MAX_FRAME (16u * 1024 * 1024) /* one client data frame's payload */
#define QS_WS_MAX_CONTROL 125u
#define QS_WS_MAX_HEADER 14u

#define QS_WS_OP_CONTINUATION 0x0
#define QS_WS_OP_TEXT 0x1
#define QS_WS_OP_BINARY 0x2
#define QS_WS_OP_CLOSE 0x8
#define QS_WS_OP_PING 0x9
#define QS_WS_OP_PONG 0xa

typedef enum {
    QS_WS_REQUEST_OK,       /* *response is the 101 to send */
    QS_WS_REQUEST_BAD,      /* *response is a 400 to send; error says why */
} QsWsRequest;

/* Answers a parsed request that asks for an upgrade (qs_http_wants_upgrade). */
QsWsRequest qs_ws_upgrade(const QsHttpRequest *req, char **response, GError **error);

/* Sec-WebSocket-Accept for a Sec-WebSocket-Key. */
char *qs_ws_accept(const char *key);

typedef enum {
    QS_WS_MORE,             /* input used up or output full: call again */
    QS_WS_PING,             /* a complete PING: answer with its payload */
    QS_WS_CLOSE,            /* the client closed */
    QS_WS_ERROR,            /* a frame against RFC 6455 or our bounds */
} QsWsEvent;

typedef struct {
    guint8 header[QS_WS_MAX_HEADER];
    guint header_have;
    guint8 mask[4];
    guint8 opcode;
    gboolean fin;
    guint64 left;           /* payload bytes of the current frame still to come */
    guint64 pos;            /* payload bytes of it seen (mask index) */
    gboolean in_frame;      /* header complete, payload under way */
    gboolean in_message;    /* a fragmented data message continues */
    guint8 control[QS_WS_MAX_CONTROL];
    guint control_len;
} QsWsDecoder;

/* Decodes client frames from in[0..in_len): data payload is unmasked into
 * out (at most out_len bytes). *used and *produced say how much was taken
 * and written. Returns at the first event; after PING the payload is in
 * d->control[0..control_len). */
QsWsEvent qs_ws_decode(QsWsDecoder *d, const guint8 *in, gsize in_len, gsize *used,
                       guint8 *out, gsize out_len, gsize *produced, GError **error);

/* A server frame's header (FIN set, no mask) for `len` payload bytes;
 * returns its size (2, 4 or 10). */
guint qs_ws_frame_header(guint8 *header, guint8 opcode, guint64 len);

G_END_DECLS
