/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared body of the client-message fuzz targets: u16 type (LE) + message body. */
#pragma once

#include "wire/qs-client-msg.h"
#include "wire/qs-scancode.h"

#include <spice/enums.h>

static volatile uint32_t fuzz_sink;

static void fuzz_on_key(uint32_t qnum, gboolean down, gpointer user_data)
{
    (void)user_data;
    /* qnum never exceeds 8 bits: E0 folds into bit 7. */
    if (qnum > 0xff) {
        __builtin_trap();
    }
    fuzz_sink += qnum + (uint32_t)down;
}

/* Reads every byte a variable-size result points to, so ASan sees any
 * pointer outside the input. */
static void fuzz_touch(uint16_t type, const QsClientMsg *msg, const uint8_t *data,
                       size_t size)
{
    gboolean has_bytes = type == SPICE_MSGC_MIGRATE_DATA;

    (void)data;
    (void)size;
    has_bytes = has_bytes || type == SPICE_MSGC_MAIN_AGENT_DATA ||
                type == SPICE_MSGC_INPUTS_KEY_SCANCODE ||
                type == SPICE_MSGC_DISPLAY_PREFERRED_VIDEO_CODEC_TYPE;
    if (has_bytes) {
        for (uint32_t i = 0; i < msg->u.bytes.len; i++) {
            fuzz_sink += msg->u.bytes.data[i];
        }
    }
}

static int fuzz_client_msg(gboolean (*parse)(uint16_t, const uint8_t *, size_t,
                                             QsClientMsg *, GError **),
                           gboolean inputs, const uint8_t *data, size_t size)
{
    QsClientMsg msg;
    GError *error = NULL;
    uint16_t type;

    if (size < 2) {
        return 0;
    }
    type = (uint16_t)(data[0] | data[1] << 8);
    /* A private copy, so reads past the body hit the redzone. */
    uint8_t *body = g_memdup2(data + 2, size - 2);
    if (parse(type, size > 2 ? body : NULL, size - 2, &msg, &error)) {
        if (error) {
            __builtin_trap();       /* success never sets an error */
        }
        fuzz_touch(type, &msg, body, size - 2);
        if (inputs && type == SPICE_MSGC_INPUTS_KEY_SCANCODE) {
            QsScancodeDecoder dec;

            qs_scancode_decoder_init(&dec);
            qs_scancode_feed(&dec, msg.u.bytes.data, msg.u.bytes.len, fuzz_on_key, NULL);
        }
    } else if (!error || error->domain != QS_CHANNEL_ERROR) {
        __builtin_trap();           /* a failure always names the problem */
    }
    g_clear_error(&error);
    g_free(body);
    return 0;
}
