/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the usbredir check the helper runs a client's usbredir stream through (qs-usbredir-check.c), with qemu's hello first. */
#include "wire/qs-usbredir-check.h"
#include "wire/qs-wire.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Input: byte 0 bit 0: qemu's hello is well-formed (1) or the next bytes
 * are qemu's first bytes as they come (0); byte 1: how the client's bytes
 * are split (a chunk of 1 + byte1 bytes at a time, so packets straddle
 * calls); then, for a well-formed hello, 4 bytes of qemu's capabilities
 * word; the rest is the client's stream. The check must never accept a
 * packet over the bound, and once it refuses it refuses for good.
 */
static void feed_client(QsUsbredirCheck *c, const uint8_t *data, size_t size, size_t chunk)
{
    gboolean refused = FALSE;

    while (size) {
        size_t n = MIN(size, chunk);
        GError *error = NULL;
        gboolean ok = qs_usbredir_check_from_client(c, data, n, &error);

        if (ok == (error != NULL) || (refused && ok)) {
            __builtin_trap();
        }
        refused = refused || !ok;
        g_clear_error(&error);
        data += n, size -= n;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autoptr(QsUsbredirCheck) c = qs_usbredir_check_new();
    GError *error = NULL;
    size_t chunk;

    if (size < 2) {
        return 0;
    }
    chunk = 1 + data[1];
    if (data[0] & 1) {
        GByteArray *hello = g_byte_array_new();
        char version[64] = "qemu usb-redir guest (fuzz)";

        if (size < 6) {
            g_byte_array_unref(hello);
            return 0;
        }
        qs_wire_u32(hello, 0);
        qs_wire_u32(hello, 64 + 4);
        qs_wire_u32(hello, 0);
        g_byte_array_append(hello, (const guint8 *)version, sizeof(version));
        g_byte_array_append(hello, data + 2, 4);
        if (!qs_usbredir_check_from_qemu(c, hello->data, hello->len, &error) ||
            !qs_usbredir_check_ready(c)) {
            __builtin_trap();
        }
        g_byte_array_unref(hello);
        feed_client(c, data + 6, size - 6, chunk);
    } else {
        /* qemu's first bytes, in chunks, then the client's if ready. */
        size_t off = 2;

        while (off < size && !qs_usbredir_check_ready(c)) {
            size_t n = MIN(size - off, chunk);

            if (!qs_usbredir_check_from_qemu(c, data + off, n, &error)) {
                g_clear_error(&error);
                return 0;
            }
            off += n;
        }
        if (qs_usbredir_check_ready(c)) {
            feed_client(c, data + off, size - off, chunk);
        }
    }
    return 0;
}
