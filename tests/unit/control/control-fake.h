/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ControlFake: QsControlOps that record what the control door passed them,
 * for the control tests. */
#pragma once

#include "control/qs-control.h"

typedef struct {
    char *password;
    gint64 expiry_us;
    gboolean disconnect;
    guint clients;              /* connected; a disconnecting ticket drops them */
    char *cert;
    gsize cert_len, key_len;
    char *view_password;        /* NULL: none set; "" removed */
    gint64 view_expiry_us;
    char *token_keys;           /* the last SetTokenKeys text */
    guint added;                /* AddClient sockets taken */
    gboolean added_skipauth, added_tls;
    gboolean added_was_socket;  /* the descriptor passed was a socket */
} ControlFake;

/* AddClient with tls is refused ("no TLS listener", NOT_SUPPORTED); its
 * descriptor is checked to be a socket and closed.
 * Every fake client is "127.0.0.1:5000"; DisconnectClient of another
 * address, or with none connected, is refused ("no such client"). The ops
 * refuse an empty password ("empty password"), a view-only
 * password equal to the password ("must differ"), token keys without
 * "[tokens]" ("not a key file") and a key under 10 bytes
 * ("bad key"); their data is a ControlFake. */
extern const QsControlOps control_fake_ops;

void control_fake_clear(ControlFake *fake);
