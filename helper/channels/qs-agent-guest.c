/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The guest's agent on its virtio port: chunks to and from the current control client's main channel. */
#include "wire/qs-agent-chunk.h"
#include "channels/qs-agent-private.h"
#include "wire/qs-wire.h"

#include <spice/vd_agent.h>

struct QsAgentGuest {
    QsAgentHost *host;              /* the one it serves, or NULL */
    QsChardev *chardev;
    QsAgentChunkReader *chunks;
    QsAgentFrame frame;             /* the guest's client-port messages */
    gboolean forwarding;            /* the current message goes to `current` */
    gboolean spoken;                /* a valid chunk since the port opened */
    gboolean broken;                /* bad framing: ignored until it reopens */
    QsAgent *current;               /* the control client it serves, or NULL */
};

gboolean qs_agent_guest_ready(QsAgentGuest *g)
{
    return g->spoken && !g->broken && qs_chardev_is_open(g->chardev);
}

static gboolean taking(QsAgentGuest *g)
{
    return g->current && g->current->started && g->current->connected;
}

/* Reads the port while the client's queue has room; with nobody to take
 * the guest's messages they are read and dropped. */
void qs_agent_guest_steer(QsAgentGuest *g)
{
    gboolean room = !taking(g) || (g->current->ch->session &&
                                   qs_agent_queued_bytes(g->current) < QS_AGENT_GUEST_CLIENT_QUEUE);

    qs_chardev_set_reading(g->chardev, room && !g->broken);
}

static void set_state(QsAgentGuest *g)
{
    gboolean ready = qs_agent_guest_ready(g);

    g->forwarding = FALSE;
    if (g->current && g->current->connected != ready) {
        qs_agent_set_connected(g->current, ready);
    }
    qs_agent_guest_steer(g);
}

static void client_port_bytes(QsAgentGuest *g, const uint8_t *data, uint32_t size,
                              GError **error)
{
    while (size > 0) {
        size_t n;
        gboolean starts, ends;

        if (!qs_agent_frame_take(&g->frame, data, size, QS_AGENT_CLIPBOARD_MSG_MAX, &n,
                                 &starts, &ends, error)) {
            return;
        }
        if (starts) {
            /* A client gets messages whole: from the first one that
             * starts after its AGENT_START. */
            g->forwarding = taking(g);
        }
        if (g->forwarding && taking(g)) {
            qs_agent_push_piece(g->current, g_bytes_new(data, n));
        }
        data += n;
        size -= (uint32_t)n;
    }
}

typedef struct {
    QsAgentGuest *guest;
    GError *error;
} ChunkCtx;

/*
 * spice-vdagentd announces its capabilities asking for ours (request 1)
 * only when it opens its port: it has started over (restarted, or its last
 * session agent went and came back) and knows no client. Through a socket
 * chardev the helper cannot see the port close and open, so this is how it
 * learns of it; it reads the message's start only, which spice-vdagentd
 * writes in one chunk.
 */
static gboolean agent_started_over(QsAgentGuest *g, const uint8_t *data, uint32_t size)
{
    return qs_agent_frame_idle(&g->frame) && size >= QS_AGENT_HEADER_SIZE + 4 &&
           qs_wire_get_u32(data + 4) == VD_AGENT_ANNOUNCE_CAPABILITIES &&
           qs_wire_get_u32(data + QS_AGENT_HEADER_SIZE) != 0;
}

static void on_chunk(uint32_t port, const uint8_t *data, uint32_t size, gpointer user_data)
{
    ChunkCtx *c = user_data;

    if (c->error) {
        return;
    }
    if (c->guest->spoken && port == VDP_CLIENT_PORT && agent_started_over(c->guest, data, size) &&
        c->guest->current && c->guest->current->connected) {
        /* As spice-server tells a client when the port closes and opens:
         * the client starts its agent over (AGENT_START, its capabilities
         * asking for the agent's), and this message, for nobody now, is
         * dropped. */
        g_message("agent: the guest's agent on %s started over (it asks for a client's "
                  "capabilities); the client is told it went and came back",
                  qs_chardev_get_name(c->guest->chardev));
        qs_agent_set_connected(c->guest->current, FALSE);
        qs_agent_set_connected(c->guest->current, TRUE);
    }
    if (!c->guest->spoken) {
        c->guest->spoken = TRUE;
        g_message("agent: the guest's agent spoke on %s: it serves the clients' agent "
                  "messages", qs_chardev_get_name(c->guest->chardev));
        set_state(c->guest);
    }
    if (port == VDP_SERVER_PORT) {
        /* Mouse state and the like, for spice-server's own use. */
        g_debug("agent: %u bytes for the server port from the guest; ignored", size);
        return;
    }
    client_port_bytes(c->guest, data, size, &c->error);
}

static void on_data(QsChardev *cd, const guint8 *data, gsize len, gpointer user_data)
{
    QsAgentGuest *g = user_data;
    ChunkCtx c = { g, NULL };

    (void)cd;
    if (g->broken) {
        return;
    }
    if (!qs_agent_chunk_reader_feed(g->chunks, data, len, on_chunk, &c, &c.error) || c.error) {
        g_message("agent: the guest's agent on %s broke the framing (%s); clients are "
                  "told it went; %s", qs_chardev_get_name(cd), c.error->message,
                  qs_chardev_is_listening(cd)
                  ? "ending qemu's connection: the agent starts over when qemu reconnects"
                  : "its port is ignored from now on (a connected descriptor cannot be "
                    "reopened)");
        g_clear_error(&c.error);
        g->broken = TRUE;
        set_state(g);
        if (qs_chardev_is_listening(cd)) {
            /* qemu reconnects: the guest side starts over. */
            qs_chardev_disconnect(cd, "the guest's agent broke the framing");
        }
        return;
    }
    qs_agent_guest_steer(g);
}

static void on_drained(QsChardev *cd, gpointer user_data)
{
    QsAgentGuest *g = user_data;

    (void)cd;
    if (g->current) {
        qs_agent_release_tokens(g->current);
    }
}

/* ---- toward the guest ---------------------------------------------------------- */

static void write_msg(QsAgentGuest *g, uint32_t port, uint32_t type, uint64_t opaque,
                      const uint8_t *data, uint32_t size)
{
    g_autoptr(GByteArray) header = g_byte_array_sized_new(20);
    g_autoptr(GByteArray) out = g_byte_array_sized_new(size + 64);

    qs_wire_u32(header, VD_AGENT_PROTOCOL);
    qs_wire_u32(header, type);
    qs_wire_u64(header, opaque);
    qs_wire_u32(header, size);
    qs_agent_chunk_build(port, header->data, data, size, out);
    if (!qs_chardev_write(g->chardev, out->data, out->len)) {
        g_debug("agent: message of type %u dropped: qemu's end of %s is closed", type,
                qs_chardev_get_name(g->chardev));
    }
}

/* spice-vdagentd speaks first only when it opens its port (its
 * capabilities, asking for the client's); a helper that comes to a port
 * the agent has had open since (a helper restarted behind a running guest)
 * would wait for it forever. Asking as a client does makes it answer with
 * its capabilities. The question carries no capabilities: the client that
 * attaches next announces its own, which spice-vdagentd then takes. */
static void ask_caps(QsAgentGuest *g)
{
    uint8_t body[8] = { 0 };

    if (g->spoken || g->broken || !qs_chardev_is_open(g->chardev)) {
        return;
    }
    body[0] = 1;                    /* request: answer with yours */
    write_msg(g, VDP_CLIENT_PORT, VD_AGENT_ANNOUNCE_CAPABILITIES, 0, body, sizeof(body));
}

static void start_over(QsAgentGuest *g)
{
    qs_agent_chunk_reader_reset(g->chunks);
    g->frame = (QsAgentFrame){ 0 };
    g->spoken = g->broken = FALSE;
}

static void on_opened(QsChardev *cd, gpointer user_data)
{
    QsAgentGuest *g = user_data;

    g_message("agent: qemu's end of %s opened; waiting for the guest's agent",
              qs_chardev_get_name(cd));
    start_over(g);
    set_state(g);
    ask_caps(g);
}

static void on_closed(QsChardev *cd, const char *reason, gboolean for_good,
                      gpointer user_data)
{
    QsAgentGuest *g = user_data;

    /* The chardev said why; clients are told the agent went. */
    (void)cd, (void)reason, (void)for_good;
    start_over(g);
    set_state(g);
    if (g->current) {
        /* What the client's queue was waiting for has gone. */
        qs_agent_release_tokens(g->current);
    }
}

QsAgentGuest *qs_agent_guest_new(QsChardev *chardev)
{
    static const QsChardevHandlers handlers = {
        .data = on_data,
        .drained = on_drained,
        .opened = on_opened,
        .closed = on_closed,
    };
    QsAgentGuest *g = g_new0(QsAgentGuest, 1);

    g->chardev = chardev;
    g->chunks = qs_agent_chunk_reader_new();
    qs_chardev_set_low_water(chardev, QS_AGENT_GUEST_QUEUE);
    qs_chardev_set_handlers(chardev, &handlers, g);
    qs_chardev_set_reading(chardev, TRUE);
    ask_caps(g);
    return g;
}

void qs_agent_guest_free(QsAgentGuest *g)
{
    if (!g) {
        return;
    }
    g_warn_if_fail(g->current == NULL);
    qs_chardev_free(g->chardev);
    qs_agent_chunk_reader_free(g->chunks);
    g_free(g);
}

void qs_agent_host_set_guest(QsAgentHost *host, QsAgentGuest *guest)
{
    QsAgentGuest *old = g_steal_pointer(&host->guest);

    if (old) {
        if (old->current) {
            old->current->guest = NULL;
            old->current = NULL;
        }
        old->host = NULL;
    }
    if (guest) {
        guest->host = host;
        host->guest = guest;
    }
}

void qs_agent_guest_attach(QsAgentGuest *g, QsAgent *a)
{
    if (g->current && g->current != a) {
        /* An older control session's agent stops being served. */
        QsAgent *old = g->current;

        if (old->connected) {
            qs_agent_set_connected(old, FALSE);
        }
        qs_agent_guest_detach(g, old);
    }
    g->current = a;
    a->guest = g;
    a->whole = qs_agent_reader_new_whole(QS_AGENT_CLIPBOARD_MSG_MAX);
    g->forwarding = FALSE;
}

void qs_agent_guest_detach(QsAgentGuest *g, QsAgent *a)
{
    if (g->current != a) {
        return;
    }
    g->current = NULL;
    g->forwarding = FALSE;
    a->guest = NULL;
    /* As spice-server does: the guest agent drops what the client held
     * (clipboard grabs, transfers in progress). */
    if (qs_agent_guest_ready(g)) {
        write_msg(g, VDP_SERVER_PORT, VD_AGENT_CLIENT_DISCONNECTED, 0, NULL, 0);
    }
    qs_agent_guest_steer(g);
}

/* A client's monitors config, in the form spice-vdagentd takes
 * (qs_agent_monitors_body_for_guest); NULL: not one to pass on. */
static GBytes *monitors_for_guest(const QsAgentMsg *msg)
{
    QsAgentMonitors mon;
    g_autoptr(GError) error = NULL;

    if (!qs_agent_parse_monitors(msg, &mon, &error)) {
        g_message("agent: a client's monitors config not passed to the guest's agent: %s",
                  error->message);
        return NULL;
    }
    return qs_agent_monitors_body_for_guest(&mon);
}

static void on_client_msg(const QsAgentMsg *msg, gpointer user_data)
{
    QsAgent *a = user_data;
    g_autoptr(GBytes) body = NULL;
    const uint8_t *data = msg->data;
    gsize size = msg->size;

    if (!a->guest) {
        return;
    }
    switch (msg->type) {
    case VD_AGENT_FILE_XFER_START:
    case VD_AGENT_FILE_XFER_STATUS:
    case VD_AGENT_FILE_XFER_DATA:
        qs_agent_xfer_seen(a);
        break;
    }
    if (msg->type == VD_AGENT_MONITORS_CONFIG) {
        body = monitors_for_guest(msg);
        if (!body) {
            return;
        }
        data = g_bytes_get_data(body, &size);
    }
    write_msg(a->guest, VDP_CLIENT_PORT, msg->type, msg->opaque, data, (uint32_t)size);
}

gboolean qs_agent_guest_on_data(QsAgent *a, const uint8_t *data, size_t size, GError **error)
{
    QsAgentGuest *g = a->guest;

    if (!g || g->current != a || !a->connected || !a->started) {
        g_debug("agent: data while no guest agent is connected; dropped");
        qs_agent_return_token(a);
        return TRUE;
    }
    if (!qs_agent_reader_feed(a->whole, data, size, on_client_msg, a, error)) {
        g_prefix_error(error, "main channel: malformed agent message: ");
        return FALSE;
    }
    /* The client's next pieces wait while the guest has not read these. */
    a->tokens_held = qs_chardev_get_queued(g->chardev) >= QS_AGENT_GUEST_QUEUE;
    qs_agent_return_token(a);
    return TRUE;
}
