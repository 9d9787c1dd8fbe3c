/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Parsing and building of the SPICE link messages (pure, no I/O). */

#include <string.h>
#include "net/qs-link.h"

guint32 qs_link_get_u32(const guint8 *buf)
{
    return (guint32)buf[0] | (guint32)buf[1] << 8 | (guint32)buf[2] << 16 |
           (guint32)buf[3] << 24;
}

void qs_link_put_u32(guint8 *buf, guint32 v)
{
    buf[0] = v & 0xff;
    buf[1] = (v >> 8) & 0xff;
    buf[2] = (v >> 16) & 0xff;
    buf[3] = (v >> 24) & 0xff;
}

SpiceLinkErr qs_link_parse_header(const guint8 *buf, gsize len,
                                  guint32 *body_size)
{
    guint32 size;

    if (len < QS_LINK_HEADER_SIZE) {
        return SPICE_LINK_ERR_INVALID_DATA;
    }
    if (qs_link_get_u32(buf) != SPICE_MAGIC) {
        return SPICE_LINK_ERR_INVALID_MAGIC;
    }
    /* Like spice-server: the major version must match, the minor is
     * informational. */
    if (qs_link_get_u32(buf + 4) != SPICE_VERSION_MAJOR) {
        return SPICE_LINK_ERR_VERSION_MISMATCH;
    }
    size = qs_link_get_u32(buf + 12);
    if (size < QS_LINK_MESS_SIZE || size > QS_LINK_MAX_BODY) {
        return SPICE_LINK_ERR_INVALID_DATA;
    }
    *body_size = size;
    return SPICE_LINK_ERR_OK;
}

SpiceLinkErr qs_link_parse_mess(const guint8 *buf, gsize len, QsLinkMess *out)
{
    guint32 n_common, n_channel, offset;

    memset(out, 0, sizeof(*out));
    if (len < QS_LINK_MESS_SIZE || len > QS_LINK_MAX_BODY) {
        return SPICE_LINK_ERR_INVALID_DATA;
    }
    n_common = qs_link_get_u32(buf + 6);
    n_channel = qs_link_get_u32(buf + 10);
    offset = qs_link_get_u32(buf + 14);
    /* Counts are checked before any arithmetic so nothing can wrap. */
    if (n_common > QS_LINK_MAX_CAPS_WORDS ||
        n_channel > QS_LINK_MAX_CAPS_WORDS) {
        return SPICE_LINK_ERR_INVALID_DATA;
    }
    if (offset < QS_LINK_MESS_SIZE || offset > len ||
        (gsize)(n_common + n_channel) * 4 > len - offset) {
        return SPICE_LINK_ERR_INVALID_DATA;
    }
    out->connection_id = qs_link_get_u32(buf);
    out->channel_type = buf[4];
    out->channel_id = buf[5];
    out->n_common_caps = n_common;
    out->n_channel_caps = n_channel;
    for (guint i = 0; i < n_common; i++) {
        out->common_caps[i] = qs_link_get_u32(buf + offset + 4 * i);
    }
    for (guint i = 0; i < n_channel; i++) {
        out->channel_caps[i] = qs_link_get_u32(buf + offset + 4 * (n_common + i));
    }
    return SPICE_LINK_ERR_OK;
}

gsize qs_link_build_reply(guint8 *buf, SpiceLinkErr error,
                          const guint8 *spki,
                          const guint32 *common_caps, guint n_common,
                          const guint32 *channel_caps, guint n_channel)
{
    guint8 *r = buf + QS_LINK_HEADER_SIZE;
    gsize body;

    if (!spki) {
        n_common = n_channel = 0;
    }
    n_common = MIN(n_common, QS_LINK_MAX_CAPS_WORDS);
    n_channel = MIN(n_channel, QS_LINK_MAX_CAPS_WORDS);
    body = QS_LINK_REPLY_SIZE + 4 * (n_common + n_channel);

    qs_link_put_u32(buf, SPICE_MAGIC);
    qs_link_put_u32(buf + 4, SPICE_VERSION_MAJOR);
    qs_link_put_u32(buf + 8, SPICE_VERSION_MINOR);
    qs_link_put_u32(buf + 12, body);

    qs_link_put_u32(r, error);
    if (spki) {
        memcpy(r + 4, spki, SPICE_TICKET_PUBKEY_BYTES);
    } else {
        memset(r + 4, 0, SPICE_TICKET_PUBKEY_BYTES);
    }
    qs_link_put_u32(r + 166, n_common);
    qs_link_put_u32(r + 170, n_channel);
    /* RYLL reads the caps right after the struct whatever the offset says,
     * so they always go there. */
    qs_link_put_u32(r + 174, QS_LINK_REPLY_SIZE);
    for (guint i = 0; i < n_common; i++) {
        qs_link_put_u32(r + QS_LINK_REPLY_SIZE + 4 * i, common_caps[i]);
    }
    for (guint i = 0; i < n_channel; i++) {
        qs_link_put_u32(r + QS_LINK_REPLY_SIZE + 4 * (n_common + i),
                        channel_caps[i]);
    }
    return QS_LINK_HEADER_SIZE + body;
}

const char *qs_link_err_to_string(SpiceLinkErr err)
{
    static const char *const names[] = {
        "ok", "error", "invalid magic", "invalid data", "version mismatch",
        "need secured", "need unsecured", "permission denied",
        "bad connection id", "channel not available",
    };

    return (guint)err < G_N_ELEMENTS(names) ? names[err] : "unknown error";
}

static const char *const channel_names[] = {
    NULL, "main", "display", "inputs", "cursor", "playback", "record",
    "tunnel", "smartcard", "usbredir", "port", "webdav",
};

const char *qs_channel_type_to_string(guint type)
{
    if (type < G_N_ELEMENTS(channel_names) && channel_names[type]) {
        return channel_names[type];
    }
    return "unknown";
}

int qs_channel_type_from_string(const char *name)
{
    for (guint i = 1; i < G_N_ELEMENTS(channel_names); i++) {
        if (g_ascii_strcasecmp(name, channel_names[i]) == 0) {
            return (int)i;
        }
    }
    return -1;
}
