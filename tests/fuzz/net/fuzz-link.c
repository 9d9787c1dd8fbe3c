/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the link-stage parser (SpiceLinkHeader + SpiceLinkMess) and
 * a reply built from what it accepted. */

#include <stdint.h>
#include <string.h>
#include "net/qs-link.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    guint32 body;
    QsLinkMess mess;
    guint8 reply[QS_LINK_REPLY_MAX_SIZE];
    guint8 spki[SPICE_TICKET_PUBKEY_BYTES] = { 0x30 };
    gsize n;

    /* Like the server: the header first, then exactly `body` bytes. */
    if (qs_link_parse_header(data, size, &body) != SPICE_LINK_ERR_OK ||
        size - QS_LINK_HEADER_SIZE < body) {
        /* Also run the body parser on whatever follows, unchecked sizes. */
        if (size > QS_LINK_HEADER_SIZE) {
            qs_link_parse_mess(data + QS_LINK_HEADER_SIZE,
                               size - QS_LINK_HEADER_SIZE, &mess);
        }
        return 0;
    }
    if (qs_link_parse_mess(data + QS_LINK_HEADER_SIZE, body, &mess) !=
        SPICE_LINK_ERR_OK) {
        return 0;
    }
    if (mess.n_common_caps > QS_LINK_MAX_CAPS_WORDS ||
        mess.n_channel_caps > QS_LINK_MAX_CAPS_WORDS) {
        __builtin_trap();
    }
    n = qs_link_build_reply(reply, SPICE_LINK_ERR_OK, spki, mess.common_caps,
                            mess.n_common_caps, mess.channel_caps,
                            mess.n_channel_caps);
    if (n > sizeof(reply) ||
        qs_link_get_u32(reply + 12) != n - QS_LINK_HEADER_SIZE) {
        __builtin_trap();
    }
    return 0;
}
