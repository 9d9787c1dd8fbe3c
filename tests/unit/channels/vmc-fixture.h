/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The chardev bridge tests' fixture: a hub with up to two bridges, client links through its callbacks, qemu's end as a socket. */
#pragma once

#include "channels/qs-channels.h"
#include "channels/qs-vmc-bridge.h"
#include "fake-peers.h"

typedef struct {
    QsChannels *hub;
    QsScreen *screen;
    QsConn *main;
    guint32 session_id;
    QsVmcBridge *bridge[2];     /* owned by the hub */
} Fixture;

void fixture_start(Fixture *fx, QsVmcBridge *b0, QsVmcBridge *b1);
void fixture_stop(Fixture *fx);
/* A client's link of (type, id) through the hub's callbacks; NULL when the
 * hub refuses it with `expect`. */
QsConn *link_to(Fixture *fx, guint8 type, guint8 id, SpiceLinkErr expect);
/* The i-th message sent on `conn`, which must be of `type`. */
const uint8_t *msg_at(QsConn *conn, guint i, guint16 type, gsize *size);
/* The SPICEVMC_DATA bytes sent on `conn` so far, in order. */
GByteArray *data_sent(QsConn *conn);
void check_port_init(QsConn *conn, guint i, const char *name, gboolean opened);
guint last_type(QsConn *conn);
QsVmcBridge *bridge_on(int fd, const char *name, uint8_t type, uint8_t id);
/* A socketpair: [0] for the helper, [1] as qemu's end (non-blocking). */
void pair(int sv[2]);
/* Reads what qemu's end has now, up to `max`. */
GByteArray *qemu_read(int fd, gsize max);
/* A listening socket in a new temporary directory, and its path. */
int listening_socket(char **path);
int qemu_connect(const char *path);
