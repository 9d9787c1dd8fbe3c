/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a link's ticket grants: the fixed tickets and the signed console
 * tokens, checked together, with the reason of a refusal for the log. */

#include <string.h>
#include "net/qs-server-private.h"

static QsTicketResult check_tickets(QsServer *s, const guint8 *password, gsize len,
                                    gint64 now_us, gboolean *view_only)
{
    *view_only = FALSE;
    if (s->ticket) {
        return qs_ticket_check_pair(s->ticket, s->view_ticket, password, len, now_us,
                                    view_only);
    }
    if (s->view_ticket) {
        QsTicketResult res = qs_ticket_check(s->view_ticket, password, len, now_us);

        *view_only = res == QS_TICKET_OK;
        return res;
    }
    return QS_TICKET_WRONG;
}

void qs_link_auth_check(QsServer *s, const guint8 *password, gsize len,
                        guint8 channel_type, guint32 connection_id, QsLinkGrant *grant)
{
    gint64 now_us = g_get_real_time();
    QsTicketResult res;
    QsTokenStatus st;

    memset(grant, 0, sizeof(*grant));
    if (s->auth_disabled) {
        grant->ok = TRUE;
        return;
    }
    res = check_tickets(s, password, len, now_us, &grant->view_only);
    if (res == QS_TICKET_OK) {
        grant->ok = TRUE;
        return;
    }
    if (s->tokens) {
        st = qs_token_verifier_check(s->tokens, password, len, now_us / G_USEC_PER_SEC,
                                     channel_type, connection_id, &grant->view_only,
                                     &grant->token);
        if (st == QS_TOKEN_VALID) {
            grant->ok = TRUE;
            grant->by_token = TRUE;
            return;
        }
        /* A token's refusal says which check failed; anything else was
         * meant as a fixed ticket. */
        if (st != QS_TOKEN_NOT_A_TOKEN) {
            grant->why = qs_token_status_to_string(st);
            return;
        }
    }
    grant->why = res == QS_TICKET_EXPIRED ? "expired ticket" : "wrong ticket";
}

void qs_link_auth_commit(QsServer *s, const QsLinkGrant *grant, guint32 session_id)
{
    if (grant->by_token && s->tokens) {
        qs_token_verifier_commit(s->tokens, &grant->token, session_id);
    }
}
