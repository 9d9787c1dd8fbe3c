/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The launcher's side of the helper's control surface (org.qemuspice.Helper1
 * on DOMAIN.ctl, a socket the launcher binds and the helper accepts on). */
#pragma once

#include <gio/gio.h>

/* Every call, the connection included, is bounded by it. */
#define QS_CONTROL_TIMEOUT_MS 5000

/* Binds the listening Unix socket at PATH (mode 0600, CLOEXEC), replacing a
 * stale one. */
int qs_control_bind(const char *path, GError **error);

/* Connects and authenticates to the helper serving PATH. */
GDBusConnection *qs_control_connect(const char *path, GError **error);

gboolean qs_control_disconnect_client(GDBusConnection *conn, const char *address,
                                      GError **error);
gboolean qs_control_set_ticket(GDBusConnection *conn, const char *password,
                               gint64 expiry, gboolean disconnect,
                               guint *kept, GError **error);
/* Sends DIR/server-cert.pem and DIR/server-key.pem. */
/* Sends a token key file's text (SetTokenKeys). */
/* SetViewTicket: "" removes it. */
gboolean qs_control_set_view_ticket(GDBusConnection *conn, const char *password,
                                    gint64 expiry, GError **error);
gboolean qs_control_set_token_keys(GDBusConnection *conn, const char *text,
                                   GError **error);
gboolean qs_control_set_certificates(GDBusConnection *conn, const char *dir,
                                     GError **error);
/* The helper's status dictionary ("a{sv}": version, pid, started, clients). */
GVariant *qs_control_get_status(GDBusConnection *conn, GError **error);
