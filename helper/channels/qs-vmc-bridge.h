/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsVmcBridge: one of qemu's chardevs and the SPICE channel (port,
 * webdav, usbredir, smartcard) that carries its bytes to a client,
 * with flow control both ways. Lives as long as the helper; the client's
 * channel comes and goes. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "net/qs-chardev.h"

typedef struct QsChannel QsChannel;
typedef struct QsVmcBridge QsVmcBridge;

/*
 * The bounds. Toward the client: qemu is read only while the channel's
 * send queue is under QS_VMC_CLIENT_QUEUE, so it holds at most that plus
 * one read (QS_CHARDEV_READ_CHUNK). Toward qemu: the client's messages are
 * read only while the chardev's queue is under QS_VMC_QEMU_QUEUE, so it
 * holds at most that plus what one read of the client's socket brought
 * (64 KiB of messages, each at most QS_VMC_MAX_CLIENT_MESSAGE).
 */
#define QS_VMC_CLIENT_QUEUE (64u * 1024u)
#define QS_VMC_QEMU_QUEUE (256u * 1024u)
#define QS_VMC_MAX_CLIENT_MESSAGE (1024u * 1024u)
/* Largest SPICEVMC_DATA we send (one read of qemu's end). */
#define QS_VMC_MAX_DATA QS_CHARDEV_READ_CHUNK

/* Takes the chardev. `channel_type` (SPICE_CHANNEL_*) and `channel_id`
 * name the SPICE channel that carries it. */
QsVmcBridge *qs_vmc_bridge_new(QsChardev *chardev, uint8_t channel_type,
                               uint8_t channel_id);
void qs_vmc_bridge_free(QsVmcBridge *bridge);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsVmcBridge, qs_vmc_bridge_free)

const char *qs_vmc_bridge_get_name(QsVmcBridge *bridge);
uint8_t qs_vmc_bridge_get_channel_type(QsVmcBridge *bridge);
uint8_t qs_vmc_bridge_get_channel_id(QsVmcBridge *bridge);
/* qemu's end is connected. */
gboolean qs_vmc_bridge_is_open(QsVmcBridge *bridge);

/* Tells the attached channel that qemu's end connected or closed. */
typedef void (*QsVmcBridgeStateFunc)(QsChannel *ch, gboolean open);

/* The client's channel for this chardev, and its end. A channel attached
 * while another holds the chardev closes the other (the hub refuses a
 * second session's link; this is the same session linking again). While
 * none is attached qemu is not read. */
void qs_vmc_bridge_attach(QsVmcBridge *bridge, QsChannel *ch, QsVmcBridgeStateFunc qemu_state);
void qs_vmc_bridge_detach(QsVmcBridge *bridge, QsChannel *ch);
/* The attached channel, or NULL. */
QsChannel *qs_vmc_bridge_get_channel(QsVmcBridge *bridge);

/* From the attached channel: the client's bytes (SPICEVMC_DATA), and its
 * send queue fell below QS_VMC_CLIENT_QUEUE. */
void qs_vmc_bridge_from_client(QsVmcBridge *bridge, const uint8_t *data, gsize len);
void qs_vmc_bridge_client_writable(QsVmcBridge *bridge);

typedef struct {
    uint64_t to_qemu;           /* bytes queued for qemu */
    uint64_t to_client;         /* bytes sent to clients */
    uint64_t dropped;           /* client bytes while qemu's end was closed */
} QsVmcBridgeStats;

void qs_vmc_bridge_get_stats(QsVmcBridge *bridge, QsVmcBridgeStats *stats);
