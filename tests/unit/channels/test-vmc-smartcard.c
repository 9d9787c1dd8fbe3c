/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The smartcard channel's bridge: a socketpair as qemu's ccid-card-passthru chardev, the fake connection as the client; the VSCard translation both ways, a bad message closing the channel before qemu sees it, and the reader removed with its client (the checks themselves: test-smartcard-check.c). */
#include "channels/qs-channels.h"
#include "wire/qs-smartcard-check.h"
#include "channels/qs-vmc-bridge.h"
#include "fake-peers.h"
#include "vmc-fixture.h"

#include <string.h>
#include <unistd.h>
#include <spice/enums.h>
#include <spice/protocol.h>
#include <vscard_common.h>

static GByteArray *le_msg(uint32_t type, uint32_t reader, const void *body, uint32_t len)
{
    uint32_t h[3] = { GUINT32_TO_LE(type), GUINT32_TO_LE(reader), GUINT32_TO_LE(len) };
    GByteArray *a = g_byte_array_new();

    g_byte_array_append(a, (const guint8 *)h, sizeof(h));
    g_byte_array_append(a, body, len);
    return a;
}

static GByteArray *be_msg(uint32_t type, uint32_t reader, const void *body, uint32_t len)
{
    uint32_t h[3] = { GUINT32_TO_BE(type), GUINT32_TO_BE(reader), GUINT32_TO_BE(len) };
    GByteArray *a = g_byte_array_new();

    g_byte_array_append(a, (const guint8 *)h, sizeof(h));
    g_byte_array_append(a, body, len);
    return a;
}

static void deliver(QsConn *card, GByteArray *m)
{
    fake_conn_deliver(card, SPICE_MSGC_SMARTCARD_DATA, m->data, m->len);
    fake_loop_run_pending();
}

/* Exactly `want` from qemu's end, waiting on the loop while the bridge
 * writes. */
static void qemu_expect(int q, GByteArray *want)
{
    g_autoptr(GByteArray) got = g_byte_array_new();

    for (int i = 0; i < 200 && got->len < want->len; i++) {
        g_autoptr(GByteArray) part = qemu_read(q, want->len - got->len);

        g_byte_array_append(got, part->data, part->len);
        if (got->len < want->len) {
            g_main_context_iteration(NULL, FALSE);
            g_usleep(1000);
        }
    }
    g_assert_cmpmem(got->data, got->len, want->data, want->len);
}

static void test_bridge(void)
{
    Fixture fx = { 0 };
    int sv[2];
    QsConn *card;
    static const uint8_t atr[] = { 0x3b, 0x02, 0x14, 0x50 };
    static const uint8_t code[4] = { 0 };
    static const uint8_t apdu[] = { 0x00, 0xa4, 0x04, 0x00 };

    pair(sv);
    fixture_start(&fx, bridge_on(sv[0], "smartcard", SPICE_CHANNEL_SMARTCARD, 0), NULL);
    fx.main = link_to(&fx, SPICE_CHANNEL_MAIN, 0, SPICE_LINK_ERR_OK);
    g_assert_null(link_to(&fx, SPICE_CHANNEL_SMARTCARD, 1, SPICE_LINK_ERR_CHANNEL_NOT_AVAILABLE));
    card = link_to(&fx, SPICE_CHANNEL_SMARTCARD, 0, SPICE_LINK_ERR_OK);
    g_assert_cmpuint(fake_conn_sent(card)->len, ==, 0);     /* no PORT_INIT */
    {
        g_autoptr(GPtrArray) clients = qs_channels_list_clients(fx.hub);
        QsClientInfo *info = g_ptr_array_index(clients, 0);

        g_assert_true(g_strv_contains((const char *const *)info->channels, "smartcard:0"));
    }

    /* Client to qemu: headers in network order, the reader's name kept. */
    {
        g_autoptr(GByteArray) add = le_msg(VSC_ReaderAdd, VSCARD_UNDEFINED_READER_ID, "r", 1);
        g_autoptr(GByteArray) m = le_msg(VSC_ATR, 0, atr, sizeof(atr));
        g_autoptr(GByteArray) want = be_msg(VSC_ReaderAdd, 0, NULL, 0);
        g_autoptr(GByteArray) want_atr = be_msg(VSC_ATR, 0, atr, sizeof(atr));

        deliver(card, add);
        qemu_expect(sv[1], want);
        deliver(card, m);
        qemu_expect(sv[1], want_atr);
    }
    /* qemu to client: its Init dropped, reader ids ours, headers little
     * endian, one message each, split reads joined. */
    {
        g_autoptr(GByteArray) s = be_msg(VSC_Init, VSCARD_UNDEFINED_READER_ID, "VSCD\0\0\0\2", 8);
        g_autoptr(GByteArray) e = be_msg(VSC_Error, 9, code, sizeof(code));
        g_autoptr(GByteArray) a = be_msg(VSC_APDU, 0, apdu, sizeof(apdu));
        g_autoptr(GByteArray) want = le_msg(VSC_Error, 0, code, sizeof(code));
        g_autoptr(GByteArray) got = NULL;

        g_byte_array_append(s, e->data, e->len);
        g_byte_array_append(s, a->data, a->len);
        g_assert_cmpint(write(sv[1], s->data, 5), ==, 5);
        for (int i = 0; i < 20; i++) {
            g_main_context_iteration(NULL, FALSE);
            g_usleep(1000);
        }
        g_assert_cmpint(write(sv[1], s->data + 5, s->len - 5), ==, (gssize)(s->len - 5));
        for (int i = 0; i < 200 && fake_conn_sent(card)->len < 2; i++) {
            g_main_context_iteration(NULL, FALSE);
            g_usleep(1000);
        }
        g_assert_cmpuint(fake_conn_sent(card)->len, ==, 2);
        got = data_sent(card);
        {
            g_autoptr(GByteArray) a_le = le_msg(VSC_APDU, 0, apdu, sizeof(apdu));

            g_byte_array_append(want, a_le->data, a_le->len);
        }
        g_assert_cmpmem(got->data, got->len, want->data, want->len);
    }
    /* A bad message closes the channel, qemu gets nothing of it, and the
     * reader goes with the channel. */
    {
        g_autoptr(GByteArray) bad = le_msg(VSC_APDU, 0, apdu, sizeof(apdu));
        g_autoptr(GByteArray) want = be_msg(VSC_ReaderRemove, 0, NULL, 0);

        bad->data[8] = 99;              /* its header's length */
        deliver(card, bad);
        g_assert_nonnull(fake_conn_close_reason(card));
        g_assert_nonnull(strstr(fake_conn_close_reason(card), "header says 99 bytes"));
        for (int i = 0; i < 50; i++) {
            g_main_context_iteration(NULL, FALSE);
        }
        qemu_expect(sv[1], want);
    }
    qs_conn_unref(card);
    fixture_stop(&fx);
    close(sv[1]);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/vmc-smartcard/bridge", test_bridge);
    return g_test_run();
}
