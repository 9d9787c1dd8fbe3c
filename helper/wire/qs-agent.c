/* SPDX-License-Identifier: GPL-2.0-or-later */
/* VDAgent messages: reassembly from AGENT_DATA pieces, chunked building, clipboard bodies. */
#include "wire/qs-agent.h"
#include "wire/qs-wire.h"

#include <spice/vd_agent.h>
#include <string.h>

G_DEFINE_QUARK(qs-agent-error-quark, qs_agent_error)

struct QsAgentReader {
    gboolean (*keep)(uint32_t type);
    uint32_t whole_max;             /* qs_agent_reader_new_whole: every type kept */
    uint8_t header[QS_AGENT_HEADER_SIZE];
    guint header_len;
    /* Body of the current message, once its header is complete. */
    QsAgentMsg msg;
    uint32_t remaining;
    GByteArray *body;               /* NULL while skipping */
};

QsAgentReader *qs_agent_reader_new(gboolean (*keep)(uint32_t type))
{
    QsAgentReader *r = g_new0(QsAgentReader, 1);

    r->keep = keep;
    return r;
}

QsAgentReader *qs_agent_reader_new_whole(uint32_t max_size)
{
    QsAgentReader *r = g_new0(QsAgentReader, 1);

    r->whole_max = max_size;
    return r;
}

void qs_agent_reader_free(QsAgentReader *r)
{
    if (r) {
        if (r->body) {
            g_byte_array_unref(r->body);
        }
        g_free(r);
    }
}

static void deliver(QsAgentReader *r, QsAgentMsgFunc func, gpointer user_data)
{
    r->msg.data = r->body ? r->body->data : NULL;
    func(&r->msg, user_data);
    if (r->body) {
        g_byte_array_unref(r->body);
        r->body = NULL;
    }
    r->header_len = 0;
}

static gboolean start_message(QsAgentReader *r, GError **error)
{
    uint32_t protocol = qs_wire_get_u32(r->header);
    uint32_t limit;

    r->msg = (QsAgentMsg){
        .type = qs_wire_get_u32(r->header + 4),
        .opaque = qs_wire_get_u64(r->header + 8),
        .size = qs_wire_get_u32(r->header + 16),
    };
    if (protocol != VD_AGENT_PROTOCOL) {
        g_set_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_MALFORMED,
                    "agent message with protocol %u (expected %u)", protocol,
                    VD_AGENT_PROTOCOL);
        return FALSE;
    }
    if (r->whole_max) {
        r->msg.kept = TRUE;
        limit = r->whole_max;
    } else {
        r->msg.kept = r->keep(r->msg.type);
        limit = r->msg.kept && r->msg.type != VD_AGENT_CLIPBOARD ? QS_AGENT_SMALL_MSG_MAX
                                                                  : QS_AGENT_CLIPBOARD_MSG_MAX;
    }
    if (r->msg.size > limit) {
        g_set_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_TOO_BIG,
                    "agent message of type %u and %u bytes (limit %u)",
                    r->msg.type, r->msg.size, limit);
        return FALSE;
    }
    r->remaining = r->msg.size;
    /* Grown as the bytes come, so a header alone cannot claim 16 MiB. */
    r->body = r->msg.kept ? g_byte_array_sized_new(MIN(r->msg.size, 65536u)) : NULL;
    return TRUE;
}

gboolean qs_agent_reader_feed(QsAgentReader *r, const uint8_t *data,
                              size_t size, QsAgentMsgFunc func,
                              gpointer user_data, GError **error)
{
    while (size > 0) {
        if (r->header_len < QS_AGENT_HEADER_SIZE) {
            size_t n = MIN(size, QS_AGENT_HEADER_SIZE - r->header_len);

            memcpy(r->header + r->header_len, data, n);
            r->header_len += (guint)n;
            data += n;
            size -= n;
            if (r->header_len < QS_AGENT_HEADER_SIZE) {
                break;
            }
            if (!start_message(r, error)) {
                return FALSE;
            }
        } else {
            size_t n = MIN(size, r->remaining);

            if (r->body) {
                g_byte_array_append(r->body, data, (guint)n);
            }
            r->remaining -= (uint32_t)n;
            data += n;
            size -= n;
        }
        if (r->header_len == QS_AGENT_HEADER_SIZE && r->remaining == 0) {
            deliver(r, func, user_data);
        }
    }
    return TRUE;
}

guint qs_agent_build(uint32_t type, const void *data, size_t size, GQueue *out)
{
    const uint8_t *p = data;
    size_t total = QS_AGENT_HEADER_SIZE + size;
    size_t done = 0;
    guint n = 0;

    g_assert(size <= UINT32_MAX);
    while (done < total) {
        size_t len = MIN(total - done, (size_t)QS_AGENT_CHUNK_MAX);
        GByteArray *b = g_byte_array_sized_new((guint)len);

        if (done == 0) {
            qs_wire_u32(b, VD_AGENT_PROTOCOL);
            qs_wire_u32(b, type);
            qs_wire_u64(b, 0);
            qs_wire_u32(b, (uint32_t)size);
            g_byte_array_append(b, p, (guint)(len - QS_AGENT_HEADER_SIZE));
        } else {
            g_byte_array_append(b, p + done - QS_AGENT_HEADER_SIZE, (guint)len);
        }
        done += len;
        g_queue_push_tail(out, g_byte_array_free_to_bytes(b));
        n++;
    }
    return n;
}

/* ---- bodies ---------------------------------------------------------------- */

static gboolean need(const QsAgentMsg *msg, const char *name, uint32_t min,
                     GError **error)
{
    if (!msg->kept || msg->size < min) {
        g_set_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_MALFORMED,
                    "agent %s message of %u bytes, needs %u", name, msg->size, min);
        return FALSE;
    }
    return TRUE;
}

gboolean qs_agent_parse_caps(const QsAgentMsg *msg, QsAgentCaps *caps,
                             GError **error)
{
    uint32_t words;

    if (!need(msg, "ANNOUNCE_CAPABILITIES", 4, error)) {
        return FALSE;
    }
    memset(caps, 0, sizeof(*caps));
    caps->request = qs_wire_get_u32(msg->data) != 0;
    words = (msg->size - 4) / 4;
    for (uint32_t i = 0; i < MIN(words, QS_AGENT_CAP_WORDS); i++) {
        caps->caps[i] = qs_wire_get_u32(msg->data + 4 + 4 * i);
    }
    return TRUE;
}

GBytes *qs_agent_caps_body(gboolean request, const uint32_t *caps, guint n_words)
{
    GByteArray *b = g_byte_array_sized_new(4 + 4 * n_words);

    qs_wire_u32(b, request ? 1 : 0);
    for (guint i = 0; i < n_words; i++) {
        qs_wire_u32(b, caps[i]);
    }
    return g_byte_array_free_to_bytes(b);
}

gboolean qs_agent_has_cap(const uint32_t *caps, guint n_words, guint cap)
{
    return cap / 32 < n_words && (caps[cap / 32] & (1u << (cap % 32)));
}

/* The optional selection header; returns the body offset after it. */
static uint32_t selection_of(const QsAgentMsg *msg, gboolean selection,
                             uint8_t *sel)
{
    *sel = selection ? msg->data[0] : VD_AGENT_CLIPBOARD_SELECTION_CLIPBOARD;
    return selection ? 4 : 0;
}

static gboolean check_selection(uint8_t sel, GError **error)
{
    if (sel > VD_AGENT_CLIPBOARD_SELECTION_SECONDARY) {
        g_set_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_MALFORMED,
                    "agent clipboard message for selection %u", sel);
        return FALSE;
    }
    return TRUE;
}

gboolean qs_agent_parse_grab(const QsAgentMsg *msg, gboolean selection,
                             QsAgentGrab *grab, GError **error)
{
    uint32_t off;

    if (!need(msg, "CLIPBOARD_GRAB", selection ? 4 : 0, error)) {
        return FALSE;
    }
    off = selection_of(msg, selection, &grab->selection);
    if (!check_selection(grab->selection, error)) {
        return FALSE;
    }
    grab->n_types = 0;
    for (; off + 4 <= msg->size && grab->n_types < QS_AGENT_GRAB_TYPES_MAX; off += 4) {
        grab->types[grab->n_types++] = qs_wire_get_u32(msg->data + off);
    }
    return TRUE;
}

static gboolean parse_clip(const QsAgentMsg *msg, const char *name,
                           gboolean selection, QsAgentClip *clip,
                           GError **error)
{
    uint32_t off;

    if (!need(msg, name, selection ? 8 : 4, error)) {
        return FALSE;
    }
    off = selection_of(msg, selection, &clip->selection);
    if (!check_selection(clip->selection, error)) {
        return FALSE;
    }
    clip->type = qs_wire_get_u32(msg->data + off);
    clip->data = msg->data + off + 4;
    clip->size = msg->size - off - 4;
    return TRUE;
}

gboolean qs_agent_parse_request(const QsAgentMsg *msg, gboolean selection,
                                QsAgentClip *req, GError **error)
{
    if (!parse_clip(msg, "CLIPBOARD_REQUEST", selection, req, error)) {
        return FALSE;
    }
    req->data = NULL;
    req->size = 0;
    return TRUE;
}

gboolean qs_agent_parse_clipboard(const QsAgentMsg *msg, gboolean selection,
                                  QsAgentClip *clip, GError **error)
{
    return parse_clip(msg, "CLIPBOARD", selection, clip, error);
}

gboolean qs_agent_parse_release(const QsAgentMsg *msg, gboolean selection,
                                uint8_t *sel, GError **error)
{
    if (!need(msg, "CLIPBOARD_RELEASE", selection ? 4 : 0, error)) {
        return FALSE;
    }
    selection_of(msg, selection, sel);
    return check_selection(*sel, error);
}

static GByteArray *clip_start(gboolean selection, uint8_t sel, size_t extra)
{
    GByteArray *b = g_byte_array_sized_new((guint)(4 + extra));

    if (selection) {
        qs_wire_u8(b, sel);
        qs_wire_u8(b, 0);
        qs_wire_u8(b, 0);
        qs_wire_u8(b, 0);
    }
    return b;
}

GBytes *qs_agent_grab_body(gboolean selection, uint8_t sel,
                           const uint32_t *types, guint n_types)
{
    GByteArray *b = clip_start(selection, sel, 4 * (size_t)n_types);

    for (guint i = 0; i < n_types; i++) {
        qs_wire_u32(b, types[i]);
    }
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_agent_request_body(gboolean selection, uint8_t sel, uint32_t type)
{
    GByteArray *b = clip_start(selection, sel, 4);

    qs_wire_u32(b, type);
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_agent_clipboard_body(gboolean selection, uint8_t sel, uint32_t type,
                                const void *data, size_t size)
{
    GByteArray *b = clip_start(selection, sel, 4 + size);

    qs_wire_u32(b, type);
    if (size) {
        g_byte_array_append(b, data, (guint)size);
    }
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_agent_release_body(gboolean selection, uint8_t sel)
{
    return g_byte_array_free_to_bytes(clip_start(selection, sel, 0));
}
