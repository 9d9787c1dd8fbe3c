/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the pure link-stage, framing and ticket code. */

#include <string.h>
#include <gio/gio.h>
#include "net/qs-frame.h"
#include "net/qs-link.h"
#include "net/qs-ticket.h"

/* A SpiceLinkHeader + SpiceLinkMess as spice-gtk sends it for `type`. */
static gsize make_link(guint8 *buf, guint32 conn_id, guint8 type,
                       guint32 n_common, guint32 n_channel, guint32 offset)
{
    guint32 body = QS_LINK_MESS_SIZE + 4 * (n_common + n_channel);

    qs_link_put_u32(buf, SPICE_MAGIC);
    qs_link_put_u32(buf + 4, 2);
    qs_link_put_u32(buf + 8, 2);
    qs_link_put_u32(buf + 12, body);
    qs_link_put_u32(buf + 16, conn_id);
    buf[20] = type;
    buf[21] = 0;
    qs_link_put_u32(buf + 22, n_common);
    qs_link_put_u32(buf + 26, n_channel);
    qs_link_put_u32(buf + 30, offset);
    for (guint i = 0; i < n_common + n_channel; i++) {
        qs_link_put_u32(buf + 34 + 4 * i, i == 0 ? 0xd : 0x100 + i);
    }
    return QS_LINK_HEADER_SIZE + body;
}

static void test_valid(void)
{
    guint8 buf[256];
    gsize n = make_link(buf, 0x1234, SPICE_CHANNEL_DISPLAY, 1, 2, 18);
    guint32 body;
    QsLinkMess m;

    g_assert_cmpint(qs_link_parse_header(buf, n, &body), ==, SPICE_LINK_ERR_OK);
    g_assert_cmpuint(body, ==, n - QS_LINK_HEADER_SIZE);
    g_assert_cmpint(qs_link_parse_mess(buf + 16, body, &m), ==,
                    SPICE_LINK_ERR_OK);
    g_assert_cmpuint(m.connection_id, ==, 0x1234);
    g_assert_cmpuint(m.channel_type, ==, SPICE_CHANNEL_DISPLAY);
    g_assert_cmpuint(m.n_common_caps, ==, 1);
    g_assert_cmpuint(m.n_channel_caps, ==, 2);
    g_assert_cmphex(m.common_caps[0], ==, 0xd);
    g_assert_cmphex(m.channel_caps[0], ==, 0x101);
    g_assert_cmphex(m.channel_caps[1], ==, 0x102);
}

static void test_caps_offset_gap(void)
{
    /* Caps may start after a gap: the offset is honoured. */
    guint8 buf[256] = { 0 };
    QsLinkMess m;

    make_link(buf, 0, 1, 0, 0, 18);
    qs_link_put_u32(buf + 12, 18 + 8 + 4);
    qs_link_put_u32(buf + 22, 1);
    qs_link_put_u32(buf + 30, 26);
    qs_link_put_u32(buf + 16 + 26, 0xabc);
    g_assert_cmpint(qs_link_parse_mess(buf + 16, 30, &m), ==,
                    SPICE_LINK_ERR_OK);
    g_assert_cmphex(m.common_caps[0], ==, 0xabc);
}

static void test_bad_header(void)
{
    guint8 buf[256];
    guint32 body;
    gsize n = make_link(buf, 0, 1, 1, 1, 18);

    g_assert_cmpint(qs_link_parse_header(buf, 15, &body), ==,
                    SPICE_LINK_ERR_INVALID_DATA);
    buf[0] = 'X';
    g_assert_cmpint(qs_link_parse_header(buf, n, &body), ==,
                    SPICE_LINK_ERR_INVALID_MAGIC);
    make_link(buf, 0, 1, 1, 1, 18);
    qs_link_put_u32(buf + 4, 1);
    g_assert_cmpint(qs_link_parse_header(buf, n, &body), ==,
                    SPICE_LINK_ERR_VERSION_MISMATCH);
    make_link(buf, 0, 1, 1, 1, 18);
    qs_link_put_u32(buf + 8, 77); /* the minor is informational */
    g_assert_cmpint(qs_link_parse_header(buf, n, &body), ==, SPICE_LINK_ERR_OK);
    qs_link_put_u32(buf + 12, QS_LINK_MAX_BODY + 1); /* oversize */
    g_assert_cmpint(qs_link_parse_header(buf, n, &body), ==,
                    SPICE_LINK_ERR_INVALID_DATA);
    qs_link_put_u32(buf + 12, 0xffffffff);
    g_assert_cmpint(qs_link_parse_header(buf, n, &body), ==,
                    SPICE_LINK_ERR_INVALID_DATA);
    qs_link_put_u32(buf + 12, 17); /* smaller than SpiceLinkMess */
    g_assert_cmpint(qs_link_parse_header(buf, n, &body), ==,
                    SPICE_LINK_ERR_INVALID_DATA);
}

static void test_bad_mess(void)
{
    guint8 buf[256];
    QsLinkMess m;
    gsize n = make_link(buf, 0, 1, 1, 1, 18);
    gsize body = n - 16;

    /* Truncated: one cap word missing. */
    g_assert_cmpint(qs_link_parse_mess(buf + 16, body - 4, &m), ==,
                    SPICE_LINK_ERR_INVALID_DATA);
    g_assert_cmpint(qs_link_parse_mess(buf + 16, 17, &m), ==,
                    SPICE_LINK_ERR_INVALID_DATA);
    /* Counts that would wrap 32-bit arithmetic. */
    qs_link_put_u32(buf + 22, 0x40000000);
    qs_link_put_u32(buf + 26, 0x40000000);
    g_assert_cmpint(qs_link_parse_mess(buf + 16, body, &m), ==,
                    SPICE_LINK_ERR_INVALID_DATA);
    /* More cap words than we accept, even if the bytes are there. */
    {
        guint8 big[16 + 18 + 4 * 40];

        make_link(big, 0, 1, 33, 0, 18);
        g_assert_cmpint(qs_link_parse_mess(big + 16, 18 + 4 * 33, &m), ==,
                        SPICE_LINK_ERR_INVALID_DATA);
        make_link(big, 0, 1, 32, 0, 18);
        g_assert_cmpint(qs_link_parse_mess(big + 16, 18 + 4 * 32, &m), ==,
                        SPICE_LINK_ERR_OK);
    }
    /* Offsets pointing into the fixed part or past the end. */
    make_link(buf, 0, 1, 1, 1, 17);
    g_assert_cmpint(qs_link_parse_mess(buf + 16, body, &m), ==,
                    SPICE_LINK_ERR_INVALID_DATA);
    make_link(buf, 0, 1, 1, 1, 22);
    g_assert_cmpint(qs_link_parse_mess(buf + 16, body, &m), ==,
                    SPICE_LINK_ERR_INVALID_DATA);
    make_link(buf, 0, 1, 1, 1, 0xfffffff0);
    g_assert_cmpint(qs_link_parse_mess(buf + 16, body, &m), ==,
                    SPICE_LINK_ERR_INVALID_DATA);
}

static void test_reply(void)
{
    guint8 buf[QS_LINK_REPLY_MAX_SIZE];
    guint8 spki[SPICE_TICKET_PUBKEY_BYTES];
    guint32 common = 0xb, chan[2] = { 0x11, 0x22 };
    gsize n;

    memset(spki, 0x5a, sizeof(spki));
    n = qs_link_build_reply(buf, SPICE_LINK_ERR_OK, spki, &common, 1, chan, 2);
    g_assert_cmpuint(n, ==, 16 + 178 + 12);
    g_assert_cmphex(qs_link_get_u32(buf), ==, SPICE_MAGIC);
    g_assert_cmpuint(qs_link_get_u32(buf + 4), ==, 2);
    g_assert_cmpuint(qs_link_get_u32(buf + 8), ==, 2);
    g_assert_cmpuint(qs_link_get_u32(buf + 12), ==, 178 + 12);
    g_assert_cmpuint(qs_link_get_u32(buf + 16), ==, 0);
    g_assert_cmpmem(buf + 20, 162, spki, 162);
    g_assert_cmpuint(qs_link_get_u32(buf + 16 + 166), ==, 1);
    g_assert_cmpuint(qs_link_get_u32(buf + 16 + 170), ==, 2);
    g_assert_cmpuint(qs_link_get_u32(buf + 16 + 174), ==, 178);
    g_assert_cmphex(qs_link_get_u32(buf + 16 + 178), ==, 0xb);
    g_assert_cmphex(qs_link_get_u32(buf + 16 + 182), ==, 0x11);
    g_assert_cmphex(qs_link_get_u32(buf + 16 + 186), ==, 0x22);

    /* An error reply: the error code, a zero key, no caps. */
    n = qs_link_build_reply(buf, SPICE_LINK_ERR_NEED_SECURED, NULL, &common, 1,
                            chan, 2);
    g_assert_cmpuint(n, ==, 16 + 178);
    g_assert_cmpuint(qs_link_get_u32(buf + 16), ==, 5);
    for (int i = 0; i < 162; i++) {
        g_assert_cmpuint(buf[20 + i], ==, 0);
    }
    g_assert_cmpuint(qs_link_get_u32(buf + 16 + 166), ==, 0);
}

static void test_channel_names(void)
{
    g_assert_cmpint(qs_channel_type_from_string("display"), ==, 2);
    g_assert_cmpint(qs_channel_type_from_string("Main"), ==, 1);
    g_assert_cmpint(qs_channel_type_from_string("nope"), ==, -1);
    g_assert_cmpstr(qs_channel_type_to_string(4), ==, "cursor");
    g_assert_cmpstr(qs_channel_type_to_string(200), ==, "unknown");
}

static void test_frame_mini(void)
{
    /* Two mini-header messages, fed one byte at a time. */
    const guint8 stream[] = {
        0x03, 0x00, 0x04, 0x00, 0x00, 0x00, 'p', 'o', 'n', 'g',
        0x02, 0x00, 0x00, 0x00, 0x00, 0x00,
    };
    QsFrameReader r;
    guint got = 0;

    qs_frame_reader_init(&r, TRUE, 1024);
    for (gsize i = 0; i < sizeof(stream); i++) {
        gsize used;
        QsFrameStatus st = qs_frame_reader_feed(&r, stream + i, 1, &used, NULL);

        g_assert_cmpuint(used, ==, 1);
        g_assert_cmpint(st, !=, QS_FRAME_ERROR);
        if (st == QS_FRAME_MESSAGE) {
            if (got == 0) {
                g_assert_cmpuint(r.type, ==, 3);
                g_assert_cmpmem(r.body, r.size, "pong", 4);
            } else {
                g_assert_cmpuint(r.type, ==, 2);
                g_assert_cmpuint(r.size, ==, 0);
            }
            got++;
        }
    }
    g_assert_cmpuint(got, ==, 2);
    qs_frame_reader_clear(&r);
}

static void test_frame_full_and_oversize(void)
{
    guint8 buf[64];
    gsize n = qs_frame_build_header(buf, FALSE, 7, 101, 3);
    QsFrameReader r;
    gsize used;
    g_autoptr(GError) error = NULL;

    g_assert_cmpuint(n, ==, 18);
    memcpy(buf + n, "abc", 3);
    qs_frame_reader_init(&r, FALSE, 3);
    g_assert_cmpint(qs_frame_reader_feed(&r, buf, n + 3, &used, NULL), ==,
                    QS_FRAME_MESSAGE);
    g_assert_cmpuint(used, ==, 21);
    g_assert_cmpuint(r.type, ==, 101);
    g_assert_cmpmem(r.body, 3, "abc", 3);

    /* 4 bytes announced against a bound of 3: refused at the header. */
    n = qs_frame_build_header(buf, FALSE, 8, 101, 4);
    g_assert_cmpint(qs_frame_reader_feed(&r, buf, n, &used, &error), ==,
                    QS_FRAME_ERROR);
    g_assert_error(error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE);
    qs_frame_reader_clear(&r);

    /* A 4 GiB announcement allocates nothing. */
    qs_frame_reader_init(&r, TRUE, 1 << 20);
    n = qs_frame_build_header(buf, TRUE, 0, 1, 0xffffffff);
    g_assert_cmpuint(n, ==, 6);
    g_assert_cmpint(qs_frame_reader_feed(&r, buf, n, &used, NULL), ==,
                    QS_FRAME_ERROR);
    g_assert_null(r.body);
    qs_frame_reader_clear(&r);
}

static void test_const_time_equal(void)
{
    g_assert_true(qs_const_time_equal((const guint8 *)"abc", 3,
                                      (const guint8 *)"abc", 3));
    g_assert_false(qs_const_time_equal((const guint8 *)"abc", 3,
                                       (const guint8 *)"abd", 3));
    g_assert_false(qs_const_time_equal((const guint8 *)"abc", 3,
                                       (const guint8 *)"abc\0", 4));
    g_assert_false(qs_const_time_equal((const guint8 *)"ab", 2,
                                       (const guint8 *)"abc", 3));
    g_assert_true(qs_const_time_equal(NULL, 0, NULL, 0));
}

static void test_ticket_check(void)
{
    gint64 now = 1000 * G_USEC_PER_SEC;
    g_autoptr(QsTicket) never = qs_ticket_new("secret", 6, 0, NULL);
    g_autoptr(QsTicket) later = qs_ticket_new("secret", 6, now + 1, NULL);
    g_autoptr(QsTicket) past = qs_ticket_new("secret", 6, now, NULL);
    g_autoptr(QsTicket) empty = qs_ticket_new("", 0, 0, NULL);
    g_autoptr(GError) error = NULL;

    g_assert_cmpint(qs_ticket_check(never, (const guint8 *)"secret", 6, now),
                    ==, QS_TICKET_OK);
    g_assert_cmpint(qs_ticket_check(never, (const guint8 *)"secreT", 6, now),
                    ==, QS_TICKET_WRONG);
    g_assert_cmpint(qs_ticket_check(never, (const guint8 *)"secre", 5, now),
                    ==, QS_TICKET_WRONG);
    g_assert_cmpint(qs_ticket_check(later, (const guint8 *)"secret", 6, now),
                    ==, QS_TICKET_OK);
    g_assert_cmpint(qs_ticket_check(past, (const guint8 *)"secret", 6, now),
                    ==, QS_TICKET_EXPIRED);
    /* A wrong password on an expired ticket says nothing about expiry. */
    g_assert_cmpint(qs_ticket_check(past, (const guint8 *)"nope", 4, now),
                    ==, QS_TICKET_WRONG);
    g_assert_cmpint(qs_ticket_check(empty, (const guint8 *)"", 0, now),
                    ==, QS_TICKET_WRONG);

    g_assert_null(qs_ticket_new("a\0b", 3, 0, &error));
    g_clear_error(&error);
    {
        char big[61];

        memset(big, 'x', sizeof(big));
        g_assert_null(qs_ticket_new(big, 61, 0, &error));
        g_clear_error(&error);
        g_autoptr(QsTicket) max = qs_ticket_new(big, 60, 0, &error);
        g_assert_nonnull(max);
    }
}

static void test_ticket_parse(void)
{
    gint64 e;
    g_autoptr(GError) error = NULL;
    g_autoptr(QsTicket) t1 = qs_ticket_parse("pw\n", 3, 0, NULL);
    g_autoptr(QsTicket) t2 = qs_ticket_parse("pw\r\nexpiry=@2000\n", 17, 5,
                                             NULL);
    g_autoptr(QsTicket) t3 = qs_ticket_parse("pw", 2, 5, NULL);

    g_assert_nonnull(t1);
    g_assert_cmpint(qs_ticket_check(t1, (const guint8 *)"pw", 2, 1), ==,
                    QS_TICKET_OK);
    g_assert_nonnull(t2);
    g_assert_cmpint(qs_ticket_get_expiry(t2), ==, 2000 * G_USEC_PER_SEC);
    g_assert_cmpint(qs_ticket_check(t2, (const guint8 *)"pw", 2, 1), ==,
                    QS_TICKET_OK);
    g_assert_cmpint(qs_ticket_get_expiry(t3), ==, 5);
    g_assert_null(qs_ticket_parse("pw\nexpiry=+5\n", 13, 0, &error));
    g_clear_error(&error);
    g_assert_null(qs_ticket_parse("pw\nhello\n", 9, 0, &error));
    g_clear_error(&error);
    g_assert_null(qs_ticket_parse("\nexpiry=never", 13, 0, &error));
    g_clear_error(&error);

    g_assert_true(qs_ticket_parse_expiry("never", 7, &e, NULL));
    g_assert_cmpint(e, ==, 0);
    g_assert_true(qs_ticket_parse_expiry("30", 7, &e, NULL));
    g_assert_cmpint(e, ==, 7 + 30 * G_USEC_PER_SEC);
    g_assert_true(qs_ticket_parse_expiry("+30", 7, &e, NULL));
    g_assert_cmpint(e, ==, 7 + 30 * G_USEC_PER_SEC);
    g_assert_true(qs_ticket_parse_expiry("@1700000000", 7, &e, NULL));
    g_assert_cmpint(e, ==, G_GINT64_CONSTANT(1700000000) * G_USEC_PER_SEC);
    g_assert_true(qs_ticket_parse_expiry("0", 7, &e, NULL));
    g_assert_cmpint(e, !=, 0); /* "0 seconds" is expired, not "never" */
    g_assert_false(qs_ticket_parse_expiry("-3", 7, &e, &error));
    g_clear_error(&error);
    g_assert_false(qs_ticket_parse_expiry("@", 7, &e, &error));
    g_clear_error(&error);
    g_assert_false(qs_ticket_parse_expiry("99999999999999999999", 7, &e,
                                          &error));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/net/link/valid", test_valid);
    g_test_add_func("/net/link/caps-offset-gap", test_caps_offset_gap);
    g_test_add_func("/net/link/bad-header", test_bad_header);
    g_test_add_func("/net/link/bad-mess", test_bad_mess);
    g_test_add_func("/net/link/reply", test_reply);
    g_test_add_func("/net/link/channel-names", test_channel_names);
    g_test_add_func("/net/frame/mini", test_frame_mini);
    g_test_add_func("/net/frame/full-and-oversize",
                    test_frame_full_and_oversize);
    g_test_add_func("/net/ticket/const-time-equal", test_const_time_equal);
    g_test_add_func("/net/ticket/check", test_ticket_check);
    g_test_add_func("/net/ticket/parse", test_ticket_parse);
    return g_test_run();
}
