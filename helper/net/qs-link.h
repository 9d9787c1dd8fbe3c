/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The SPICE link stage as pure byte functions: parse the client's
 * SpiceLinkHeader + SpiceLinkMess, build the SpiceLinkReply. No I/O. */
#pragma once

#include <glib.h>
#include "net/qs-spice-protocol.h"

G_BEGIN_DECLS

#define QS_LINK_HEADER_SIZE 16
#define QS_LINK_MESS_SIZE 18
#define QS_LINK_REPLY_SIZE 178
/* spice-server's bound on SpiceLinkHeader.size. */
#define QS_LINK_MAX_BODY 4096u
/* Per cap list; spice-gtk sends one word, RYLL accepts 16. */
#define QS_LINK_MAX_CAPS_WORDS 32u
#define QS_LINK_TICKET_SIZE 128
#define QS_LINK_REPLY_MAX_SIZE \
    (QS_LINK_HEADER_SIZE + QS_LINK_REPLY_SIZE + 8 * QS_LINK_MAX_CAPS_WORDS)

typedef struct {
    guint32 connection_id;
    guint8 channel_type;
    guint8 channel_id;
    guint n_common_caps;
    guint n_channel_caps;
    guint32 common_caps[QS_LINK_MAX_CAPS_WORDS];
    guint32 channel_caps[QS_LINK_MAX_CAPS_WORDS];
} QsLinkMess;

/* Validates the 16-byte SpiceLinkHeader (`len` must be at least 16):
 * magic, major version 2, body size within [18, QS_LINK_MAX_BODY]. Returns
 * SPICE_LINK_ERR_OK and the body size, else INVALID_MAGIC,
 * VERSION_MISMATCH or INVALID_DATA. */
SpiceLinkErr qs_link_parse_header(const guint8 *buf, gsize len,
                                  guint32 *body_size);

/* Validates a SpiceLinkMess body of exactly `len` bytes (the header's
 * size): cap counts within QS_LINK_MAX_CAPS_WORDS, caps_offset ≥ 18 and the
 * cap words inside the body. Returns SPICE_LINK_ERR_OK or INVALID_DATA. */
SpiceLinkErr qs_link_parse_mess(const guint8 *buf, gsize len, QsLinkMess *out);

/* Writes SpiceLinkHeader + SpiceLinkReply (+ caps right after the fixed
 * struct, caps_offset 178) into `buf` (at least QS_LINK_REPLY_MAX_SIZE).
 * `spki` may be NULL for an error reply (zero key, no caps). Returns the
 * number of bytes written. */
gsize qs_link_build_reply(guint8 *buf, SpiceLinkErr error,
                          const guint8 *spki,
                          const guint32 *common_caps, guint n_common,
                          const guint32 *channel_caps, guint n_channel);

/* Writes one little-endian u32 (the auth mechanism / link result). */
void qs_link_put_u32(guint8 *buf, guint32 v);
guint32 qs_link_get_u32(const guint8 *buf);

const char *qs_link_err_to_string(SpiceLinkErr err);
const char *qs_channel_type_to_string(guint type);
/* Parses a channel type name ("main", "display", ...); -1 if unknown. */
int qs_channel_type_from_string(const char *name);

G_END_DECLS
