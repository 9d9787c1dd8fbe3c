/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Creating or adopting listening TCP sockets. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Splits "ADDR:PORT" / "[V6ADDR]:PORT" (ADDR may be a name). */
gboolean qs_listen_parse_address(const char *spec, char **host, char **port,
                                 GError **error);

/* A bound, listening, non-blocking, CLOEXEC socket for "ADDR:PORT". */
int qs_listen_tcp(const char *spec, GError **error);

/* Checks an inherited fd is a listening stream socket and makes it
 * non-blocking and CLOEXEC. */
gboolean qs_listen_adopt_fd(int fd, GError **error);

guint16 qs_listen_get_port(int fd);

/* TRUE if every address "ADDR:PORT" resolves to is a loopback address. */
gboolean qs_listen_spec_is_loopback(const char *spec);
/* TRUE if the listening socket is bound to a loopback address or is an
 * AF_UNIX socket. */
gboolean qs_listen_fd_is_loopback(int fd);

G_END_DECLS
