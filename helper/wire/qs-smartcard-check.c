/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The smartcard channel's VSCard checks and translation (qs-smartcard-check.h says why). */
#include "wire/qs-smartcard-check.h"
#include "wire/qs-client-msg.h"

#include <string.h>
#include <vscard_common.h>

#define HEADER_SIZE 12u

struct QsSmartcardCheck {
    gboolean reader_added;
    /* qemu's stream: the message being gathered, or the bytes left of one
     * being skipped. */
    GByteArray *in;
    uint32_t skip;
    gboolean told_skip;
    /* qemu's answers (VSC_Error) still to come to removes we made for
     * clients that went: they are for nobody, as spice-server drops what
     * its device says without a client. */
    guint stale_answers;
};

QsSmartcardCheck *qs_smartcard_check_new(void)
{
    QsSmartcardCheck *check = g_new0(QsSmartcardCheck, 1);

    check->in = g_byte_array_new();
    return check;
}

void qs_smartcard_check_free(QsSmartcardCheck *check)
{
    if (!check) {
        return;
    }
    g_byte_array_unref(check->in);
    g_free(check);
}

gboolean qs_smartcard_check_reader_added(QsSmartcardCheck *check)
{
    return check->reader_added;
}

static uint32_t get_le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t get_be(const uint8_t *p)
{
    return (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24;
}

static void put_le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16),
    p[3] = (uint8_t)(v >> 24);
}

static void put_be(uint8_t *p, uint32_t v)
{
    p[3] = (uint8_t)v, p[2] = (uint8_t)(v >> 8), p[1] = (uint8_t)(v >> 16),
    p[0] = (uint8_t)(v >> 24);
}

static void to_qemu_msg(GByteArray *out, uint32_t type, const uint8_t *body, uint32_t len)
{
    uint8_t head[HEADER_SIZE];

    put_be(head, type);
    put_be(head + 4, QS_SMARTCARD_READER_ID);
    put_be(head + 8, len);
    g_byte_array_append(out, head, sizeof(head));
    if (len) {
        g_byte_array_append(out, body, len);
    }
}

/* A little-endian message for the client. */
static GBytes *client_msg(uint32_t type, uint32_t reader_id, const uint8_t *body, uint32_t len)
{
    uint8_t *m = g_malloc(HEADER_SIZE + len);

    put_le(m, type);
    put_le(m + 4, reader_id);
    put_le(m + 8, len);
    if (len) {
        memcpy(m + HEADER_SIZE, body, len);
    }
    return g_bytes_new_take(m, HEADER_SIZE + len);
}

static GBytes *client_error(uint32_t reader_id, uint32_t code)
{
    uint8_t body[4];

    put_le(body, code);
    return client_msg(VSC_Error, reader_id, body, sizeof(body));
}

gboolean qs_smartcard_check_from_client(QsSmartcardCheck *check, const uint8_t *data,
                                        gsize len, GByteArray *to_qemu, GPtrArray *replies,
                                        GError **error)
{
    uint32_t type, reader, body_len;

    if (len < HEADER_SIZE) {
        g_set_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_MALFORMED,
                    "a smartcard message of %zu bytes, shorter than its header", len);
        return FALSE;
    }
    type = get_le(data);
    reader = get_le(data + 4);
    body_len = get_le(data + 8);
    if (body_len != len - HEADER_SIZE) {
        g_set_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_MALFORMED,
                    "a smartcard message (type %u) whose header says %u bytes but "
                    "carries %zu", type, body_len, len - HEADER_SIZE);
        return FALSE;
    }
    if (body_len > QS_SMARTCARD_MAX_BODY) {
        g_set_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_MALFORMED,
                    "a smartcard message (type %u) of %u bytes; qemu takes at most %u",
                    type, body_len, QS_SMARTCARD_MAX_BODY);
        return FALSE;
    }
    switch (type) {
    case VSC_Init:
        return TRUE;            /* the client's greeting: the server's business */
    case VSC_ReaderAdd:
        if (check->reader_added) {
            /* As spice-server answers when it has no reader left. */
            g_ptr_array_add(replies, client_error(VSCARD_UNDEFINED_READER_ID,
                                                  VSC_CANNOT_ADD_MORE_READERS));
            return TRUE;
        }
        check->reader_added = TRUE;
        to_qemu_msg(to_qemu, VSC_ReaderAdd, NULL, 0);
        return TRUE;
    case VSC_ReaderRemove:
    case VSC_ATR:
    case VSC_CardRemove:
    case VSC_APDU:
    case VSC_Error:
        break;
    default:
        g_set_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_MALFORMED,
                    "a smartcard message of unknown type %u", type);
        return FALSE;
    }
    if (!check->reader_added || reader != QS_SMARTCARD_READER_ID) {
        g_set_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_MALFORMED,
                    "a smartcard message (type %u) for reader %u, which the client has "
                    "not added (its reader is %u once added)", type, reader,
                    QS_SMARTCARD_READER_ID);
        return FALSE;
    }
    if (type == VSC_Error && body_len < 4) {
        g_set_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_MALFORMED,
                    "a smartcard error message of %u bytes, without its code", body_len);
        return FALSE;
    }
    if (type == VSC_ReaderRemove) {
        check->reader_added = FALSE;
        body_len = 0;           /* as spice-server: an empty remove */
    }
    to_qemu_msg(to_qemu, type, data + HEADER_SIZE, body_len);
    return TRUE;
}

void qs_smartcard_check_client_gone(QsSmartcardCheck *check, GByteArray *to_qemu)
{
    if (check->reader_added) {
        check->reader_added = FALSE;
        check->stale_answers++;
        to_qemu_msg(to_qemu, VSC_ReaderRemove, NULL, 0);
    }
}

void qs_smartcard_check_qemu_reset(QsSmartcardCheck *check)
{
    g_byte_array_set_size(check->in, 0);
    check->skip = 0;
    check->stale_answers = 0;
}

void qs_smartcard_check_from_qemu(QsSmartcardCheck *check, const uint8_t *data, gsize len,
                                  GPtrArray *to_client)
{
    while (len > 0) {
        uint32_t type, body_len;
        gsize want;

        if (check->skip) {
            gsize n = MIN(len, check->skip);

            check->skip -= (uint32_t)n;
            data += n;
            len -= n;
            continue;
        }
        /* The header first, then as much body as it says. */
        want = check->in->len < HEADER_SIZE
                   ? HEADER_SIZE - check->in->len
                   : HEADER_SIZE + get_be(check->in->data + 8) - check->in->len;
        want = MIN(want, len);
        g_byte_array_append(check->in, data, (guint)want);
        data += want;
        len -= want;
        if (check->in->len < HEADER_SIZE) {
            continue;
        }
        body_len = get_be(check->in->data + 8);
        type = get_be(check->in->data);
        if (body_len > QS_SMARTCARD_MAX_BODY) {
            if (!check->told_skip) {
                check->told_skip = TRUE;
                g_message("smartcard: qemu sent a message (type %u) of %u bytes, more "
                          "than %u; skipped", type, body_len, QS_SMARTCARD_MAX_BODY);
            }
            check->skip = body_len;
            g_byte_array_set_size(check->in, 0);
            continue;
        }
        if (check->in->len < HEADER_SIZE + body_len) {
            continue;
        }
        if (type == VSC_Error && check->stale_answers) {
            check->stale_answers--;
        } else if (type != VSC_Init) {
            /* qemu's reader id is its own: the client knows ours. */
            g_ptr_array_add(to_client, client_msg(type, QS_SMARTCARD_READER_ID,
                                                  check->in->data + HEADER_SIZE, body_len));
        }
        g_byte_array_set_size(check->in, 0);
    }
}
