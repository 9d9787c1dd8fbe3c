/* SPDX-License-Identifier: GPL-2.0-or-later */
/* How the server turns a finished link into a QsConn (net-internal). */
#pragma once

#include "net/qs-conn.h"
#include "net/qs-link.h"
#include "net/qs-stream.h"

/* Takes the stream; `first`/`first_len` are raw bytes queued before any
 * message (the link result). */
QsConn *qs_conn_new(QsStream *stream, const QsLinkMess *mess,
                    guint32 session_id, gboolean view_only, const guint8 *first,
                    gsize first_len);
