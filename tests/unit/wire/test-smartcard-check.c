/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The smartcard channel's VSCard checks and translation: the client's messages to qemu's network-order stream, qemu's stream to the client's messages, the reader's add and remove, and what is refused. */
#include "wire/qs-smartcard-check.h"
#include "wire/qs-vmc-msg.h"

#include <string.h>
#include <vscard_common.h>

static GBytes *le_msg(uint32_t type, uint32_t reader, const void *body, uint32_t len,
                      uint32_t header_len)
{
    uint32_t h[3] = { GUINT32_TO_LE(type), GUINT32_TO_LE(reader), GUINT32_TO_LE(header_len) };
    GByteArray *a = g_byte_array_new();

    g_byte_array_append(a, (const guint8 *)h, sizeof(h));
    if (len) {
        g_byte_array_append(a, body, len);
    }
    return g_byte_array_free_to_bytes(a);
}

static void be_msg(GByteArray *a, uint32_t type, uint32_t reader, const void *body, uint32_t len)
{
    uint32_t h[3] = { GUINT32_TO_BE(type), GUINT32_TO_BE(reader), GUINT32_TO_BE(len) };

    g_byte_array_append(a, (const guint8 *)h, sizeof(h));
    if (len) {
        g_byte_array_append(a, body, len);
    }
}

/* Runs one client message; returns its error (or NULL) and fills outs. */
static GError *client(QsSmartcardCheck *c, GBytes *m, GByteArray *to_qemu, GPtrArray *replies)
{
    GError *error = NULL;
    gsize n;
    const uint8_t *d = g_bytes_get_data(m, &n);
    gboolean ok = qs_smartcard_check_from_client(c, d, n, to_qemu, replies, &error);

    g_assert_true(ok == (error == NULL));
    g_bytes_unref(m);
    return error;
}

static void test_client_flow(void)
{
    g_autoptr(QsSmartcardCheck) c = qs_smartcard_check_new();
    g_autoptr(GByteArray) q = g_byte_array_new();
    g_autoptr(GByteArray) want = g_byte_array_new();
    g_autoptr(GPtrArray) r = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    static const uint8_t atr[] = { 0x3b, 0x88, 0x80, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 0x11 };
    static const uint8_t apdu[] = { 0x90, 0x00 };
    GError *e;

    /* The client's greeting is not qemu's business. */
    g_assert_null(client(c, le_msg(VSC_Init, 0, "VSCD\0\0\0\2\0\0\0\0", 12, 12), q, r));
    g_assert_cmpuint(q->len, ==, 0);
    /* An APDU before the reader is added. */
    e = client(c, le_msg(VSC_APDU, 0, apdu, 2, 2), q, r);
    g_assert_nonnull(strstr(e->message, "not added"));
    g_clear_error(&e);
    /* The reader's name stays here: qemu gets an empty ReaderAdd. */
    g_assert_null(client(c, le_msg(VSC_ReaderAdd, VSCARD_UNDEFINED_READER_ID, "My Reader", 9, 9),
                         q, r));
    g_assert_true(qs_smartcard_check_reader_added(c));
    be_msg(want, VSC_ReaderAdd, 0, NULL, 0);
    /* A second reader: refused by us, as spice-server does. */
    g_assert_null(client(c, le_msg(VSC_ReaderAdd, VSCARD_UNDEFINED_READER_ID, "b", 1, 1), q, r));
    g_assert_cmpuint(r->len, ==, 1);
    {
        gsize n;
        const uint32_t *m = g_bytes_get_data(g_ptr_array_index(r, 0), &n);

        g_assert_cmpuint(n, ==, 16);
        g_assert_cmpuint(GUINT32_FROM_LE(m[0]), ==, VSC_Error);
        g_assert_cmpuint(GUINT32_FROM_LE(m[1]), ==, VSCARD_UNDEFINED_READER_ID);
        g_assert_cmpuint(GUINT32_FROM_LE(m[2]), ==, 4);
        g_assert_cmpuint(GUINT32_FROM_LE(m[3]), ==, VSC_CANNOT_ADD_MORE_READERS);
    }
    g_assert_null(client(c, le_msg(VSC_ATR, 0, atr, sizeof(atr), sizeof(atr)), q, r));
    be_msg(want, VSC_ATR, 0, atr, sizeof(atr));
    g_assert_null(client(c, le_msg(VSC_APDU, 0, apdu, 2, 2), q, r));
    be_msg(want, VSC_APDU, 0, apdu, 2);
    /* Another reader id than ours. */
    e = client(c, le_msg(VSC_APDU, 1, apdu, 2, 2), q, r);
    g_assert_nonnull(strstr(e->message, "reader 1"));
    g_clear_error(&e);
    g_assert_null(client(c, le_msg(VSC_CardRemove, 0, NULL, 0, 0), q, r));
    be_msg(want, VSC_CardRemove, 0, NULL, 0);
    /* The client going removes its reader. */
    qs_smartcard_check_client_gone(c, q);
    be_msg(want, VSC_ReaderRemove, 0, NULL, 0);
    g_assert_false(qs_smartcard_check_reader_added(c));
    qs_smartcard_check_client_gone(c, q);        /* nothing more */
    g_assert_cmpmem(q->data, q->len, want->data, want->len);
}

static void test_client_refused(void)
{
    g_autoptr(QsSmartcardCheck) c = qs_smartcard_check_new();
    g_autoptr(GByteArray) q = g_byte_array_new();
    g_autoptr(GPtrArray) r = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    g_autofree uint8_t *big = g_malloc0(QS_SMARTCARD_MAX_BODY + 1);
    GError *e;

    e = client(c, g_bytes_new("\1\0\0\0\0\0", 6), q, r);
    g_assert_nonnull(strstr(e->message, "shorter than its header"));
    g_clear_error(&e);
    g_assert_null(client(c, le_msg(VSC_ReaderAdd, 0, NULL, 0, 0), q, r));
    g_byte_array_set_size(q, 0);
    /* The header's length must be the message's. */
    e = client(c, le_msg(VSC_APDU, 0, "abc", 3, 2), q, r);
    g_assert_nonnull(strstr(e->message, "says 2 bytes but carries 3"));
    g_clear_error(&e);
    e = client(c, le_msg(VSC_APDU, 0, "abc", 3, 0xffffffff), q, r);
    g_assert_nonnull(e);
    g_clear_error(&e);
    /* Longer than qemu's buffer takes. */
    e = client(c, le_msg(VSC_APDU, 0, big, QS_SMARTCARD_MAX_BODY + 1, QS_SMARTCARD_MAX_BODY + 1),
               q, r);
    g_assert_nonnull(strstr(e->message, "qemu takes at most"));
    g_clear_error(&e);
    g_assert_null(client(c, le_msg(VSC_APDU, 0, big, QS_SMARTCARD_MAX_BODY, QS_SMARTCARD_MAX_BODY),
                         q, r));
    g_assert_cmpuint(q->len, ==, 12 + QS_SMARTCARD_MAX_BODY);
    /* An error message without its code: qemu would read past it. */
    e = client(c, le_msg(VSC_Error, 0, "ab", 2, 2), q, r);
    g_assert_nonnull(strstr(e->message, "without its code"));
    g_clear_error(&e);
    e = client(c, le_msg(VSC_Flush, 0, NULL, 0, 0), q, r);
    g_assert_nonnull(strstr(e->message, "unknown type 8"));
    g_clear_error(&e);
    e = client(c, le_msg(77, 0, NULL, 0, 0), q, r);
    g_assert_nonnull(strstr(e->message, "unknown type 77"));
    g_clear_error(&e);
    g_assert_cmpuint(q->len, ==, 12 + QS_SMARTCARD_MAX_BODY);
    g_assert_cmpuint(r->len, ==, 0);
}

/* qemu's stream a byte at a time: Init dropped, reader ids made ours,
 * headers little endian; an oversized message skipped whole. */
static void test_from_qemu(void)
{
    g_autoptr(QsSmartcardCheck) c = qs_smartcard_check_new();
    g_autoptr(GByteArray) s = g_byte_array_new();
    g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    g_autofree uint8_t *big = g_malloc0(QS_SMARTCARD_MAX_BODY + 1);
    static const uint8_t code[4] = { 0 };
    static const uint8_t apdu[] = { 0x00, 0xa4, 0x04, 0x00 };

    be_msg(s, VSC_Init, VSCARD_UNDEFINED_READER_ID, "VSCD\0\0\0\2\0\0\0\0", 12);
    be_msg(s, VSC_Error, 7, code, 4);
    be_msg(s, VSC_APDU, 0, big, QS_SMARTCARD_MAX_BODY + 1);
    be_msg(s, VSC_APDU, 0, apdu, sizeof(apdu));
    for (guint i = 0; i < s->len; i++) {
        qs_smartcard_check_from_qemu(c, s->data + i, 1, out);
    }
    g_assert_cmpuint(out->len, ==, 2);
    {
        gsize n;
        const uint8_t *m = g_bytes_get_data(g_ptr_array_index(out, 0), &n);
        uint32_t h[3];

        memcpy(h, m, sizeof(h));
        g_assert_cmpuint(n, ==, 16);
        g_assert_cmpuint(GUINT32_FROM_LE(h[0]), ==, VSC_Error);
        g_assert_cmpuint(GUINT32_FROM_LE(h[1]), ==, QS_SMARTCARD_READER_ID);
        g_assert_cmpuint(GUINT32_FROM_LE(h[2]), ==, 4);
        m = g_bytes_get_data(g_ptr_array_index(out, 1), &n);
        memcpy(h, m, sizeof(h));
        g_assert_cmpuint(GUINT32_FROM_LE(h[0]), ==, VSC_APDU);
        g_assert_cmpmem(m + 12, n - 12, apdu, sizeof(apdu));
    }
    /* A client that went with its reader: qemu's answer to the remove
     * made for it is not passed on; the next answer is. */
    {
        g_autoptr(GByteArray) q = g_byte_array_new();
        g_autoptr(GByteArray) answers = g_byte_array_new();
        g_autoptr(GPtrArray) r = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
        guint before = out->len;
        static const uint8_t le_ok[16] = { 2, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0 };

        g_assert_true(qs_smartcard_check_from_client(c, (const uint8_t *)"\3\0\0\0\0\0\0\0\0\0\0\0",
                                                     12, q, r, NULL));
        qs_smartcard_check_client_gone(c, q);
        be_msg(answers, VSC_Error, 0, code, 4);
        be_msg(answers, VSC_Error, 0, code, 4);
        qs_smartcard_check_from_qemu(c, answers->data, answers->len, out);
        g_assert_cmpuint(out->len, ==, before + 1);
        g_assert_cmpmem(g_bytes_get_data(g_ptr_array_index(out, before), NULL), 16, le_ok, 16);
        g_ptr_array_set_size(out, 2);
    }
    /* A reconnect drops a half message. */
    qs_smartcard_check_from_qemu(c, s->data + 40, 5, out);
    qs_smartcard_check_qemu_reset(c);
    qs_smartcard_check_from_qemu(c, s->data, s->len, out);
    g_assert_cmpuint(out->len, ==, 4);
}

static void test_fd_arg(void)
{
    int fd = -1;
    g_autoptr(GError) error = NULL;

    g_assert_true(qs_smartcard_fd_parse("5", &fd, NULL));
    g_assert_cmpint(fd, ==, 5);
    g_assert_false(qs_smartcard_fd_parse("-1", &fd, &error));
    g_assert_nonnull(strstr(error->message, "--smartcard-fd"));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/smartcard-check/client-flow", test_client_flow);
    g_test_add_func("/smartcard-check/client-refused", test_client_refused);
    g_test_add_func("/smartcard-check/from-qemu", test_from_qemu);
    g_test_add_func("/smartcard-check/fd-arg", test_fd_arg);
    return g_test_run();
}
