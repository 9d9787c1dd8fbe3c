/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the smartcard channel's VSCard checks (qs-smartcard-check.c), the client's messages and qemu's stream interleaved. */
#include "wire/qs-smartcard-check.h"

#include <string.h>
#include <vscard_common.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Input: records of one byte (bit 0: from the client (1) or qemu (0);
 * bit 1: the client's channel goes after it; bit 2: qemu reconnects
 * before it), a little-endian u16 length and that many bytes: a client
 * record is one SMARTCARD_DATA message, a qemu record a piece of its
 * stream. What must hold: everything for qemu is whole network-order
 * messages of the types spice-server passes on, for reader 0 (ReaderAdd
 * and ReaderRemove empty), none over the bound; everything for the
 * client is one message with a little-endian header that says its
 * length, never qemu's VSC_Init, for reader 0 unless it is our refusal
 * of a second reader.
 */
static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static void check_to_qemu(const GByteArray *q)
{
    for (guint off = 0; off < q->len;) {
        uint32_t type, len;

        if (q->len - off < 12) {
            __builtin_trap();
        }
        type = be32(q->data + off);
        len = be32(q->data + off + 8);
        if (be32(q->data + off + 4) != QS_SMARTCARD_READER_ID || len > QS_SMARTCARD_MAX_BODY ||
            len > q->len - off - 12) {
            __builtin_trap();
        }
        switch (type) {
        case VSC_ReaderAdd:
        case VSC_ReaderRemove:
            if (len) {
                __builtin_trap();
            }
            break;
        case VSC_Error:
            if (len < 4) {
                __builtin_trap();
            }
            break;
        case VSC_ATR:
        case VSC_CardRemove:
        case VSC_APDU:
            break;
        default:
            __builtin_trap();
        }
        off += 12 + len;
    }
}

static void check_to_client(GPtrArray *msgs)
{
    for (guint i = 0; i < msgs->len; i++) {
        gsize n;
        const uint8_t *m = g_bytes_get_data(g_ptr_array_index(msgs, i), &n);

        if (n < 12 || le32(m + 8) != n - 12 || le32(m) == VSC_Init ||
            (le32(m + 4) != QS_SMARTCARD_READER_ID &&
             !(le32(m) == VSC_Error && le32(m + 4) == VSCARD_UNDEFINED_READER_ID))) {
            __builtin_trap();
        }
    }
    g_ptr_array_set_size(msgs, 0);
}

/* The check's one log line (an oversized message from qemu) would come
 * on most inputs: not printed, as it slows the fuzzer down. */
static void quiet(const char *domain, GLogLevelFlags level, const char *message, gpointer data)
{
    (void)domain, (void)level, (void)message, (void)data;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static gboolean quieted;
    g_autoptr(QsSmartcardCheck) c = qs_smartcard_check_new();
    g_autoptr(GByteArray) q = g_byte_array_new();
    g_autoptr(GPtrArray) msgs = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);

    if (!quieted) {
        quieted = TRUE;
        g_log_set_default_handler(quiet, NULL);
    }
    while (size >= 3) {
        uint8_t what = data[0];
        size_t n = MIN((size_t)(data[1] | data[2] << 8), size - 3);
        const uint8_t *rec = data + 3;

        if (what & 4) {
            qs_smartcard_check_qemu_reset(c);
        }
        if (what & 1) {
            GError *error = NULL;
            gboolean ok = qs_smartcard_check_from_client(c, rec, n, q, msgs, &error);

            if (ok == (error != NULL)) {
                __builtin_trap();
            }
            g_clear_error(&error);
        } else {
            qs_smartcard_check_from_qemu(c, rec, n, msgs);
        }
        if (what & 2) {
            qs_smartcard_check_client_gone(c, q);
            if (qs_smartcard_check_reader_added(c)) {
                __builtin_trap();
            }
        }
        check_to_client(msgs);
        data += 3 + n;
        size -= 3 + n;
    }
    check_to_qemu(q);
    return 0;
}
