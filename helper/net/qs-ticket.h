/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The SPICE ticket (password) with its optional expiry, and its checks. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct QsTicket QsTicket;

/* Expiry in wall-clock microseconds since the epoch (g_get_real_time()),
 * 0 = never. The password is at most SPICE_MAX_PASSWORD_LENGTH bytes, no
 * NUL inside. */
QsTicket *qs_ticket_new(const char *password, gsize len, gint64 expiry_us,
                        GError **error);
QsTicket *qs_ticket_ref(QsTicket *ticket);
void qs_ticket_unref(QsTicket *ticket);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsTicket, qs_ticket_unref)

gint64 qs_ticket_get_expiry(const QsTicket *ticket);

/* Parses a ticket source (file or fd contents): the first line is the
 * password (a trailing "\n" or "\r\n" is not part of it); an optional
 * following line "expiry=@UNIX_SECONDS" or "expiry=never" sets the expiry.
 * `default_expiry_us` applies when the source names none. */
QsTicket *qs_ticket_parse(const char *text, gsize len,
                          gint64 default_expiry_us, GError **error);

/* Parses --ticket-expiry: "never", "@UNIX_SECONDS" (absolute) or
 * "SECONDS" / "+SECONDS" (from `now_us`). Returns microseconds, 0 = never. */
gboolean qs_ticket_parse_expiry(const char *spec, gint64 now_us,
                                gint64 *expiry_us, GError **error);

typedef enum {
    QS_TICKET_OK,
    QS_TICKET_WRONG,
    QS_TICKET_EXPIRED,
} QsTicketResult;

/* Checks a decrypted ticket (the bytes before the client's terminating
 * NUL) at wall-clock time `now_us`. The comparison takes time independent
 * of where the inputs differ. */
QsTicketResult qs_ticket_check(const QsTicket *ticket, const guint8 *candidate,
                               gsize len, gint64 now_us);

/* Do the two tickets have one password (expiries aside)? */
gboolean qs_ticket_same_password(const QsTicket *a, const QsTicket *b);

/* Constant-time equality of two byte strings of possibly different
 * lengths (time depends only on the longer length). */
gboolean qs_const_time_equal(const guint8 *a, gsize alen,
                             const guint8 *b, gsize blen);

G_END_DECLS
