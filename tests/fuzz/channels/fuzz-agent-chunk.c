/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: what the guest's agent writes on its port (VDIChunkHeader framing, then message boundaries of the client port's data), as the guest agent bridge reads it. */
#include "wire/qs-agent-chunk.h"
#include "wire/qs-agent.h"

#include <spice/vd_agent.h>

/*
 * Input: u8 read size (0 means 1), then the port's bytes, fed in reads of
 * that size as the chardev would deliver them. Client-port chunk data goes
 * through the message-boundary tracker with the bridge's limit; a broken
 * stream is reset and reading goes on, as when qemu's end reopens.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    QsAgentFrame frame;
    gboolean broken;
} Ctx;

static void on_chunk(uint32_t port, const uint8_t *data, uint32_t size, gpointer user_data)
{
    Ctx *c = user_data;

    g_assert(size <= QS_AGENT_CHUNK_DATA_MAX);
    g_assert(port == VDP_CLIENT_PORT || port == VDP_SERVER_PORT);
    while (port == VDP_CLIENT_PORT && !c->broken && size > 0) {
        GError *error = NULL;
        size_t n;
        gboolean starts, ends;

        if (!qs_agent_frame_take(&c->frame, data, size, QS_AGENT_CLIPBOARD_MSG_MAX, &n,
                                 &starts, &ends, &error)) {
            g_error_free(error);
            c->broken = TRUE;
            return;
        }
        g_assert(n > 0 && n <= size);
        g_assert(!ends || qs_agent_frame_idle(&c->frame));
        data += n;
        size -= (uint32_t)n;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    QsAgentChunkReader *r;
    Ctx c = { { { 0 }, 0, 0 }, FALSE };
    size_t step;

    if (size < 1) {
        return 0;
    }
    step = data[0] ? data[0] : 1;
    data++;
    size--;
    r = qs_agent_chunk_reader_new();
    while (size > 0) {
        size_t n = MIN(step, size);
        GError *error = NULL;

        if (!qs_agent_chunk_reader_feed(r, data, n, on_chunk, &c, &error)) {
            g_error_free(error);
            qs_agent_chunk_reader_reset(r);
            c.frame = (QsAgentFrame){ { 0 }, 0, 0 };
            c.broken = FALSE;
        }
        data += n;
        size -= n;
    }
    qs_agent_chunk_reader_free(r);
    return 0;
}
