/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The guest agent's side of the wire: VDIChunkHeader framing on its virtio port, and message boundaries in a byte stream (pure). */
#pragma once

#include <glib.h>
#include <stdint.h>

/*
 * On the guest's virtio-serial port com.redhat.spice.0 the agent's
 * messages (VDAgentMessage, qs-agent.h) travel in chunks: {u32 port; u32
 * size; data[size]}, port VDP_CLIENT_PORT (1) for what goes to or comes
 * from the client, VDP_SERVER_PORT (2) for the server. We cut ours at
 * VD_AGENT_MAX_DATA_SIZE bytes of data, as spice-gtk does; spice-vdagentd
 * writes a whole message as one chunk whatever its size, so the reader
 * hands a chunk on in pieces of at most that size, each one AGENT_DATA
 * piece of the main channel. spice-protocol.md §6.
 */

#define QS_AGENT_CHUNK_HEADER_SIZE 8u
/* Largest chunk data either way (VD_AGENT_MAX_DATA_SIZE). */
#define QS_AGENT_CHUNK_DATA_MAX 2048u

typedef struct QsAgentChunkReader QsAgentChunkReader;

/* One chunk's data, `port` VDP_CLIENT_PORT or VDP_SERVER_PORT. */
typedef void (*QsAgentChunkFunc)(uint32_t port, const uint8_t *data, uint32_t size,
                                 gpointer user_data);

QsAgentChunkReader *qs_agent_chunk_reader_new(void);
void qs_agent_chunk_reader_free(QsAgentChunkReader *reader);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsAgentChunkReader, qs_agent_chunk_reader_free)
/* Forgets a partial chunk (the guest's port reopened). */
void qs_agent_chunk_reader_reset(QsAgentChunkReader *reader);

/* Feeds bytes read from the port; calls `func` for each piece of a chunk:
 * every QS_AGENT_CHUNK_DATA_MAX bytes and at its end (an empty chunk: once,
 * empty). FALSE: a chunk header with an unknown port; the stream is broken
 * until reset. Holds at most one piece. */
gboolean qs_agent_chunk_reader_feed(QsAgentChunkReader *reader, const uint8_t *data,
                                    size_t size, QsAgentChunkFunc func,
                                    gpointer user_data, GError **error);

/* A VDAgentMessage cut into chunks for `port`, appended to `out` as one
 * GBytes of consecutive chunks. `header` is the message's 20-byte header. */
void qs_agent_chunk_build(uint32_t port, const uint8_t *header, const uint8_t *data,
                          size_t size, GByteArray *out);

/*
 * Message boundaries in a stream of VDAgentMessages (the guest's client-port
 * data): which bytes start, continue and end a message, without keeping any
 * but the header. Used to pass a guest's messages to a client whole: a
 * client that comes mid-message gets the next one first.
 */
typedef struct {
    uint8_t header[20];
    guint header_len;
    uint32_t remaining;             /* body bytes still to come */
} QsAgentFrame;

/* Takes the bytes of at most one message's remainder from `data`; returns
 * how many. `*starts`: these bytes begin a message (its first header
 * byte); `*ends`: they complete it. FALSE with `error`: a header whose
 * protocol is not VD_AGENT_PROTOCOL or whose size is over `max_size`. */
gboolean qs_agent_frame_take(QsAgentFrame *frame, const uint8_t *data, size_t size,
                             uint32_t max_size, size_t *taken, gboolean *starts,
                             gboolean *ends, GError **error);
/* Between messages. */
gboolean qs_agent_frame_idle(const QsAgentFrame *frame);
