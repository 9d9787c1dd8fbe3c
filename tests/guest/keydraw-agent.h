/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The test guest's vdagent (keydraw-agent.c, keydraw-agent-spice.c): its state and what the two files share. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <spice/vd_agent.h>

#define PORT_NAME "com.redhat.spice.0"
/* Bounds on what the host may make us hold: one clipboard message and one
 * serial command line. */
#define MSG_MAX (1024 * 1024)
#define CMD_MAX 4096
#define SELECTIONS 3
/* Shown text of a CLIPBOARD line; the length and hash cover all of it. */
#define SHOW_MAX 300
#define PORT_WAIT_S 60

#define CAP(c) (1u << (c))
#define OUR_CAPS (CAP(VD_AGENT_CAP_CLIPBOARD_BY_DEMAND) | \
                  CAP(VD_AGENT_CAP_CLIPBOARD_SELECTION) | \
                  CAP(VD_AGENT_CAP_CLIPBOARD_GRAB_SERIAL))

struct agent {
    bool spice;                 /* a SPICE server's agent port, not qemu's vdagent */
    int port;                   /* the virtio-serial port */
    int tty;                    /* serial console, commands come in here */
    unsigned restart_ms;        /* RESTART asked: the port closed this long */
    uint32_t peer_caps;         /* qemu's caps[0] */
    bool caps_sent;             /* on this connection */
    bool ready;
    /* message stream of the client port, reassembled from chunks */
    VDIChunkHeader chunk;
    size_t chunk_have;          /* bytes of the chunk header read */
    uint32_t chunk_left;        /* payload bytes of the chunk still to come */
    VDAgentMessage hdr;
    size_t hdr_have;
    uint8_t *msg;
    uint32_t msg_have;
    uint32_t skip;              /* bytes of an oversized message to drop */
    /* clipboard */
    uint32_t serial[SELECTIONS];     /* next serial of our grabs */
    uint8_t *owned[SELECTIONS];      /* our data when we hold the selection */
    size_t owned_len[SELECTIONS];
    uint32_t owned_type[SELECTIONS]; /* VD_AGENT_CLIPBOARD_UTF8_TEXT or _IMAGE_PNG */
    /* the server port's messages (header only: they have no body) */
    uint8_t srv[sizeof(VDAgentMessage)];
    size_t srv_have;
    /* one file transfer at a time (spice-gtk sends them one after another) */
    bool xfer;
    uint32_t xfer_id;
    uint64_t xfer_size, xfer_have;
    uint32_t xfer_fnv;
    char xfer_name[128];
    char cmd[CMD_MAX];
    size_t cmd_len;
};

#define FNV_START 2166136261u

static inline void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/* keydraw-agent.c */
/* One message in chunks of at most VD_AGENT_MAX_DATA_SIZE. */
void agent_send_msg(struct agent *a, uint32_t type, const uint8_t *data, uint32_t size);
uint32_t agent_fnv1a_more(uint32_t h, const uint8_t *p, size_t n);

/* keydraw-agent-spice.c: toward a SPICE server (keydraw.agent=spice) */
void agent_on_xfer_msg(struct agent *a, uint32_t type, const uint8_t *p, uint32_t n);
/* The client went (or a new connection): its caps, grabs and transfer go. */
void agent_forget_client(struct agent *a);
/* Bytes of the server port's chunks. */
void agent_feed_server(struct agent *a, const uint8_t *p, size_t n);
/* Bytes of each FLOOD message. */
#define FLOOD_MSG 60000
void agent_flood(struct agent *a);
