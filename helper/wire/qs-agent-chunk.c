/* SPDX-License-Identifier: GPL-2.0-or-later */
/* VDIChunkHeader framing of the guest agent's port, and VDAgentMessage boundaries in a byte stream. */
#include "wire/qs-agent-chunk.h"
#include "wire/qs-agent.h"
#include "wire/qs-wire.h"

#include <spice/vd_agent.h>
#include <string.h>

struct QsAgentChunkReader {
    uint8_t header[QS_AGENT_CHUNK_HEADER_SIZE];
    guint header_len;
    uint32_t port;
    uint32_t left;                  /* the chunk's bytes not read yet */
    uint8_t data[QS_AGENT_CHUNK_DATA_MAX];
    uint32_t have;                  /* of them in `data`, not passed on yet */
    gboolean broken;
};

QsAgentChunkReader *qs_agent_chunk_reader_new(void)
{
    return g_new0(QsAgentChunkReader, 1);
}

void qs_agent_chunk_reader_free(QsAgentChunkReader *r)
{
    g_free(r);
}

void qs_agent_chunk_reader_reset(QsAgentChunkReader *r)
{
    r->header_len = 0;
    r->left = 0;
    r->have = 0;
    r->broken = FALSE;
}

gboolean qs_agent_chunk_reader_feed(QsAgentChunkReader *r, const uint8_t *data,
                                    size_t size, QsAgentChunkFunc func,
                                    gpointer user_data, GError **error)
{
    if (r->broken) {
        g_set_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_MALFORMED,
                    "agent chunk stream already broken");
        return FALSE;
    }
    while (size > 0) {
        if (r->header_len < QS_AGENT_CHUNK_HEADER_SIZE) {
            size_t n = MIN(size, QS_AGENT_CHUNK_HEADER_SIZE - r->header_len);

            memcpy(r->header + r->header_len, data, n);
            r->header_len += (guint)n;
            data += n;
            size -= n;
            if (r->header_len < QS_AGENT_CHUNK_HEADER_SIZE) {
                break;
            }
            r->port = qs_wire_get_u32(r->header);
            r->left = qs_wire_get_u32(r->header + 4);
            r->have = 0;
            if (r->port != VDP_CLIENT_PORT && r->port != VDP_SERVER_PORT) {
                r->broken = TRUE;
                g_set_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_MALFORMED,
                            "agent chunk for port %u (expected %u or %u)", r->port,
                            VDP_CLIENT_PORT, VDP_SERVER_PORT);
                return FALSE;
            }
        } else {
            size_t n = MIN(MIN(size, (size_t)r->left),
                           (size_t)(QS_AGENT_CHUNK_DATA_MAX - r->have));

            memcpy(r->data + r->have, data, n);
            r->have += (uint32_t)n;
            r->left -= (uint32_t)n;
            data += n;
            size -= n;
        }
        if (r->header_len < QS_AGENT_CHUNK_HEADER_SIZE) {
            continue;
        }
        /* A piece is passed on when the buffer is full or the chunk ends
         * (an empty chunk too, once); a longer chunk goes on in pieces. */
        if (r->left == 0 || r->have == QS_AGENT_CHUNK_DATA_MAX) {
            uint32_t have = r->have;

            r->have = 0;
            if (r->left == 0) {
                r->header_len = 0;
            }
            func(r->port, r->data, have, user_data);
        }
    }
    return TRUE;
}

void qs_agent_chunk_build(uint32_t port, const uint8_t *header, const uint8_t *data,
                          size_t size, GByteArray *out)
{
    size_t total = QS_AGENT_HEADER_SIZE + size;

    for (size_t done = 0; done < total;) {
        size_t len = MIN(total - done, (size_t)QS_AGENT_CHUNK_DATA_MAX);
        size_t end = done + len;

        qs_wire_u32(out, port);
        qs_wire_u32(out, (uint32_t)len);
        if (done < QS_AGENT_HEADER_SIZE) {
            size_t h = MIN(end, (size_t)QS_AGENT_HEADER_SIZE) - done;

            g_byte_array_append(out, header + done, (guint)h);
            done += h;
        }
        if (done < end) {
            g_byte_array_append(out, data + done - QS_AGENT_HEADER_SIZE, (guint)(end - done));
            done = end;
        }
    }
}

gboolean qs_agent_frame_take(QsAgentFrame *f, const uint8_t *data, size_t size,
                             uint32_t max_size, size_t *taken, gboolean *starts,
                             gboolean *ends, GError **error)
{
    size_t n = 0;

    *starts = f->header_len == 0 && size > 0;
    *ends = FALSE;
    if (f->header_len < QS_AGENT_HEADER_SIZE) {
        n = MIN(size, QS_AGENT_HEADER_SIZE - f->header_len);
        memcpy(f->header + f->header_len, data, n);
        f->header_len += (guint)n;
        if (f->header_len < QS_AGENT_HEADER_SIZE) {
            *taken = n;
            return TRUE;
        }
        f->remaining = qs_wire_get_u32(f->header + 16);
        if (qs_wire_get_u32(f->header) != VD_AGENT_PROTOCOL) {
            g_set_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_MALFORMED,
                        "agent message with protocol %u (expected %u)",
                        qs_wire_get_u32(f->header), VD_AGENT_PROTOCOL);
            return FALSE;
        }
        if (f->remaining > max_size) {
            g_set_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_TOO_BIG,
                        "agent message of type %u and %u bytes (limit %u)",
                        qs_wire_get_u32(f->header + 4), f->remaining, max_size);
            return FALSE;
        }
    }
    {
        size_t body = MIN(size - n, (size_t)f->remaining);

        f->remaining -= (uint32_t)body;
        n += body;
    }
    if (f->remaining == 0) {
        f->header_len = 0;
        *ends = TRUE;
    }
    *taken = n;
    return TRUE;
}

gboolean qs_agent_frame_idle(const QsAgentFrame *f)
{
    return f->header_len == 0;
}
