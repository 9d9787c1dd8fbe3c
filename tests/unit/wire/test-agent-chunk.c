/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The guest agent's port framing: VDIChunkHeader reading and building, and message boundaries. */
#include "wire/qs-agent-chunk.h"
#include "wire/qs-agent.h"
#include "wire/qs-wire.h"

#include <spice/vd_agent.h>
#include <string.h>

typedef struct {
    GByteArray *client;             /* client-port data, concatenated */
    guint n_client, n_server;
    uint32_t max_size;
} Got;

static void on_chunk(uint32_t port, const uint8_t *data, uint32_t size, gpointer user_data)
{
    Got *got = user_data;

    g_assert_cmpuint(size, <=, QS_AGENT_CHUNK_DATA_MAX);
    got->max_size = MAX(got->max_size, size);
    if (port == VDP_CLIENT_PORT) {
        g_byte_array_append(got->client, data, size);
        got->n_client++;
    } else {
        g_assert_cmpuint(port, ==, VDP_SERVER_PORT);
        got->n_server++;
    }
}

static void make_header(uint8_t *h, uint32_t protocol, uint32_t type, uint32_t size)
{
    g_autoptr(GByteArray) b = g_byte_array_new();

    qs_wire_u32(b, protocol);
    qs_wire_u32(b, type);
    qs_wire_u64(b, 0x1122334455667788ull);
    qs_wire_u32(b, size);
    memcpy(h, b->data, QS_AGENT_HEADER_SIZE);
}

/* A 5000-byte message built into chunks and read back, fed a byte at a
 * time and all at once: the same message, chunks at most 2048 bytes. */
static void test_roundtrip(void)
{
    uint8_t header[QS_AGENT_HEADER_SIZE];
    uint8_t body[5000];
    g_autoptr(GByteArray) wire = g_byte_array_new();

    for (guint i = 0; i < sizeof(body); i++) {
        body[i] = (uint8_t)(i * 7);
    }
    make_header(header, VD_AGENT_PROTOCOL, VD_AGENT_CLIPBOARD, sizeof(body));
    qs_agent_chunk_build(VDP_CLIENT_PORT, header, body, sizeof(body), wire);
    /* 5020 bytes: 2048 + 2048 + 924, each with its 8-byte header. */
    g_assert_cmpuint(wire->len, ==, 5020 + 3 * QS_AGENT_CHUNK_HEADER_SIZE);
    for (guint step = 1; step <= wire->len; step += wire->len - 1) {
        g_autoptr(QsAgentChunkReader) r = qs_agent_chunk_reader_new();
        Got got = { g_byte_array_new(), 0, 0, 0 };

        for (guint off = 0; off < wire->len; off += step) {
            g_assert_true(qs_agent_chunk_reader_feed(r, wire->data + off,
                                                     MIN(step, wire->len - off), on_chunk,
                                                     &got, NULL));
        }
        g_assert_cmpuint(got.n_client, ==, 3);
        g_assert_cmpuint(got.max_size, ==, QS_AGENT_CHUNK_DATA_MAX);
        g_assert_cmpuint(got.client->len, ==, sizeof(header) + sizeof(body));
        g_assert_cmpmem(got.client->data, sizeof(header), header, sizeof(header));
        g_assert_cmpmem(got.client->data + sizeof(header), sizeof(body), body, sizeof(body));
        g_byte_array_unref(got.client);
    }
}

/* spice-vdagentd writes a message as one chunk whatever its size (a
 * 5000-byte text came as one chunk of 5028 bytes): it is read in pieces
 * of at most 2048 bytes, the same bytes in order, fed a byte at a time and
 * all at once, and the chunk after it is read as usual. */
static void test_large_chunk(void)
{
    uint8_t header[QS_AGENT_HEADER_SIZE];
    uint8_t body[5008];
    g_autoptr(GByteArray) wire = g_byte_array_new();

    for (guint i = 0; i < sizeof(body); i++) {
        body[i] = (uint8_t)(i * 13);
    }
    make_header(header, VD_AGENT_PROTOCOL, VD_AGENT_CLIPBOARD, sizeof(body));
    qs_wire_u32(wire, VDP_CLIENT_PORT);
    qs_wire_u32(wire, sizeof(header) + sizeof(body));
    g_byte_array_append(wire, header, sizeof(header));
    g_byte_array_append(wire, body, sizeof(body));
    qs_wire_u32(wire, VDP_SERVER_PORT);
    qs_wire_u32(wire, 0);
    for (guint step = 1; step <= wire->len; step += wire->len - 1) {
        g_autoptr(QsAgentChunkReader) r = qs_agent_chunk_reader_new();
        Got got = { g_byte_array_new(), 0, 0, 0 };

        for (guint off = 0; off < wire->len; off += step) {
            g_assert_true(qs_agent_chunk_reader_feed(r, wire->data + off,
                                                     MIN(step, wire->len - off), on_chunk,
                                                     &got, NULL));
        }
        /* 5028 bytes: 2048 + 2048 + 932. */
        g_assert_cmpuint(got.n_client, ==, 3);
        g_assert_cmpuint(got.n_server, ==, 1);
        g_assert_cmpuint(got.max_size, ==, QS_AGENT_CHUNK_DATA_MAX);
        g_assert_cmpuint(got.client->len, ==, sizeof(header) + sizeof(body));
        g_assert_cmpmem(got.client->data, sizeof(header), header, sizeof(header));
        g_assert_cmpmem(got.client->data + sizeof(header), sizeof(body), body, sizeof(body));
        g_byte_array_unref(got.client);
    }
}

static void test_bad_chunks(void)
{
    static const struct {
        uint32_t port, size;
        const char *says;
    } bad[] = {
        { 0, 4, "port 0" },
        { 3, 4, "port 3" },
        { 0xffffffffu, 4, "port 4294967295" },
    };

    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(QsAgentChunkReader) r = qs_agent_chunk_reader_new();
        g_autoptr(GByteArray) b = g_byte_array_new();
        g_autoptr(GError) error = NULL;
        g_autoptr(GError) again = NULL;
        Got got = { g_byte_array_new(), 0, 0, 0 };

        qs_wire_u32(b, bad[i].port);
        qs_wire_u32(b, bad[i].size);
        g_assert_false(qs_agent_chunk_reader_feed(r, b->data, b->len, on_chunk, &got, &error));
        g_assert_nonnull(strstr(error->message, bad[i].says));
        /* Broken until reset. */
        g_assert_false(qs_agent_chunk_reader_feed(r, b->data, 1, on_chunk, &got, &again));
        qs_agent_chunk_reader_reset(r);
        g_byte_array_set_size(b, 0);
        qs_wire_u32(b, VDP_SERVER_PORT);
        qs_wire_u32(b, 0);
        g_assert_true(qs_agent_chunk_reader_feed(r, b->data, b->len, on_chunk, &got, NULL));
        g_assert_cmpuint(got.n_server, ==, 1);
        g_byte_array_unref(got.client);
    }
}

/* Two messages back to back, cut at every place: each one's bytes start,
 * then end, and the lengths add up. */
static void test_frames(void)
{
    uint8_t stream[2 * QS_AGENT_HEADER_SIZE + 10 + 3];

    make_header(stream, VD_AGENT_PROTOCOL, VD_AGENT_CLIPBOARD, 10);
    memset(stream + QS_AGENT_HEADER_SIZE, 'a', 10);
    make_header(stream + QS_AGENT_HEADER_SIZE + 10, VD_AGENT_PROTOCOL,
                VD_AGENT_CLIPBOARD_RELEASE, 3);
    memset(stream + 2 * QS_AGENT_HEADER_SIZE + 10, 'b', 3);
    for (size_t cut = 0; cut <= sizeof(stream); cut++) {
        QsAgentFrame f = { 0 };
        guint starts = 0, ends = 0;
        size_t pieces[] = { cut, sizeof(stream) - cut };
        size_t off = 0;

        for (guint p = 0; p < 2; p++) {
            size_t left = pieces[p];

            while (left > 0) {
                size_t n;
                gboolean s, e;

                g_assert_true(qs_agent_frame_take(&f, stream + off, left, 100, &n, &s, &e, NULL));
                g_assert_cmpuint(n, >, 0);
                starts += s;
                ends += e;
                off += n;
                left -= n;
            }
        }
        g_assert_cmpuint(starts, ==, 2);
        g_assert_cmpuint(ends, ==, 2);
        g_assert_true(qs_agent_frame_idle(&f));
    }
    {
        QsAgentFrame f = { 0 };
        uint8_t h[QS_AGENT_HEADER_SIZE];
        g_autoptr(GError) error = NULL;
        g_autoptr(GError) big = NULL;
        size_t n;
        gboolean s, e;

        make_header(h, 2, VD_AGENT_CLIPBOARD, 0);
        g_assert_false(qs_agent_frame_take(&f, h, sizeof(h), 100, &n, &s, &e, &error));
        g_assert_nonnull(strstr(error->message, "protocol 2"));
        f = (QsAgentFrame){ 0 };
        make_header(h, VD_AGENT_PROTOCOL, VD_AGENT_CLIPBOARD, 101);
        g_assert_false(qs_agent_frame_take(&f, h, sizeof(h), 100, &n, &s, &e, &big));
        g_assert_nonnull(strstr(big->message, "limit 100"));
    }
}

/* The whole-message reader keeps every type, up to its limit. */
static void on_whole(const QsAgentMsg *msg, gpointer user_data)
{
    *(uint32_t *)user_data = msg->size;
    g_assert_true(msg->kept);
}

static void test_whole_reader(void)
{
    g_autoptr(QsAgentReader) r = qs_agent_reader_new_whole(70000);
    g_autoptr(GError) error = NULL;
    uint8_t h[QS_AGENT_HEADER_SIZE];
    g_autofree uint8_t *body = g_malloc0(65548);
    uint32_t got = 0;

    /* A file transfer's data message: 64 KiB and its 12-byte header. */
    make_header(h, VD_AGENT_PROTOCOL, VD_AGENT_FILE_XFER_DATA, 65548);
    g_assert_true(qs_agent_reader_feed(r, h, sizeof(h), on_whole, &got, NULL));
    g_assert_true(qs_agent_reader_feed(r, body, 65548, on_whole, &got, NULL));
    g_assert_cmpuint(got, ==, 65548);
    make_header(h, VD_AGENT_PROTOCOL, VD_AGENT_FILE_XFER_DATA, 70001);
    g_assert_false(qs_agent_reader_feed(r, h, sizeof(h), on_whole, &got, &error));
    g_assert_nonnull(strstr(error->message, "limit 70000"));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/channels/agent-chunk/roundtrip", test_roundtrip);
    g_test_add_func("/channels/agent-chunk/large", test_large_chunk);
    g_test_add_func("/channels/agent-chunk/bad", test_bad_chunks);
    g_test_add_func("/channels/agent-chunk/frames", test_frames);
    g_test_add_func("/channels/agent-chunk/whole-reader", test_whole_reader);
    return g_test_run();
}
