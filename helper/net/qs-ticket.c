/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The SPICE ticket: loading, expiry and constant-time checking. */

#include <string.h>
#include <gio/gio.h>
#include "net/qs-spice-protocol.h"
#include "net/qs-ticket.h"

struct QsTicket {
    gint ref;
    gint64 expiry_us;
    gsize len;
    guint8 password[SPICE_MAX_PASSWORD_LENGTH];
};

QsTicket *qs_ticket_new(const char *password, gsize len, gint64 expiry_us,
                        GError **error)
{
    QsTicket *t;

    if (len > SPICE_MAX_PASSWORD_LENGTH) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "the ticket is longer than %d bytes",
                    SPICE_MAX_PASSWORD_LENGTH);
        return NULL;
    }
    if (memchr(password, '\0', len)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "the ticket contains a NUL byte");
        return NULL;
    }
    t = g_new0(QsTicket, 1);
    t->ref = 1;
    t->expiry_us = expiry_us;
    t->len = len;
    memcpy(t->password, password, len);
    return t;
}

QsTicket *qs_ticket_ref(QsTicket *ticket)
{
    g_atomic_int_inc(&ticket->ref);
    return ticket;
}

void qs_ticket_unref(QsTicket *ticket)
{
    if (ticket && g_atomic_int_dec_and_test(&ticket->ref)) {
        explicit_bzero(ticket, sizeof(*ticket));
        g_free(ticket);
    }
}

gint64 qs_ticket_get_expiry(const QsTicket *ticket)
{
    return ticket->expiry_us;
}

static gboolean parse_seconds(const char *s, gint64 *out)
{
    guint64 v;

    if (!g_ascii_string_to_unsigned(s, 10, 0, G_MAXINT64 / G_USEC_PER_SEC,
                                    &v, NULL)) {
        return FALSE;
    }
    *out = (gint64)v;
    return TRUE;
}

gboolean qs_ticket_parse_expiry(const char *spec, gint64 now_us,
                                gint64 *expiry_us, GError **error)
{
    gint64 secs;

    if (g_strcmp0(spec, "never") == 0) {
        *expiry_us = 0;
        return TRUE;
    }
    if (spec[0] == '@') {
        if (parse_seconds(spec + 1, &secs) && secs > 0) {
            *expiry_us = secs * G_USEC_PER_SEC;
            return TRUE;
        }
    } else if (parse_seconds(spec[0] == '+' ? spec + 1 : spec, &secs)) {
        /* A relative expiry of 0 means "already expired", not "never". */
        *expiry_us = MAX(now_us + secs * G_USEC_PER_SEC, 1);
        return TRUE;
    }
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "invalid ticket expiry '%s' (never, SECONDS, +SECONDS or "
                "@UNIX_SECONDS)", spec);
    return FALSE;
}

QsTicket *qs_ticket_parse(const char *text, gsize len,
                          gint64 default_expiry_us, GError **error)
{
    const char *nl = memchr(text, '\n', len);
    gsize pw_len = nl ? (gsize)(nl - text) : len;
    gint64 expiry = default_expiry_us;

    if (pw_len > 0 && text[pw_len - 1] == '\r') {
        pw_len--;
    }
    if (pw_len == 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "the ticket source holds an empty password");
        return NULL;
    }
    if (nl) {
        g_autofree char *rest = g_strndup(nl + 1, len - (gsize)(nl - text) - 1);
        g_auto(GStrv) lines = g_strsplit(rest, "\n", -1);

        for (guint i = 0; lines[i]; i++) {
            char *line = g_strstrip(lines[i]);

            if (line[0] == '\0') {
                continue;
            }
            if (!g_str_has_prefix(line, "expiry=")) {
                g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                            "unexpected line in the ticket source "
                            "(only 'expiry=never' or 'expiry=@UNIX_SECONDS' "
                            "may follow the password)");
                return NULL;
            }
            line += strlen("expiry=");
            if (line[0] != '@' && strcmp(line, "never") != 0) {
                g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                            "a ticket source's expiry must be absolute "
                            "(@UNIX_SECONDS) or never");
                return NULL;
            }
            if (!qs_ticket_parse_expiry(line, 0, &expiry, error)) {
                return NULL;
            }
        }
    }
    return qs_ticket_new(text, pw_len, expiry, error);
}

gboolean qs_const_time_equal(const guint8 *a, gsize alen,
                             const guint8 *b, gsize blen)
{
    gsize n = MAX(alen, blen);
    guint8 diff = alen != blen;

    /* Every byte position up to the longer length is visited; the shorter
     * input contributes zeros past its end. */
    for (gsize i = 0; i < n; i++) {
        guint8 x = i < alen ? a[i] : 0;
        guint8 y = i < blen ? b[i] : 0;

        diff |= x ^ y;
    }
    return diff == 0;
}

QsTicketResult qs_ticket_check(const QsTicket *ticket, const guint8 *candidate,
                               gsize len, gint64 now_us)
{
    gboolean same = qs_const_time_equal(ticket->password, ticket->len,
                                        candidate, len);

    /* An empty password never authenticates (spice-server does the same):
     * "no ticket" is --disable-ticketing, not an empty file. */
    if (!same || ticket->len == 0) {
        return QS_TICKET_WRONG;
    }
    if (ticket->expiry_us != 0 && now_us >= ticket->expiry_us) {
        return QS_TICKET_EXPIRED;
    }
    return QS_TICKET_OK;
}

gboolean qs_ticket_same_password(const QsTicket *a, const QsTicket *b)
{
    return qs_const_time_equal(a->password, a->len, b->password, b->len);
}
