/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsUsbredirCheck: whether a client's usbredir stream is one qemu's usb-redir can parse, judged before qemu sees it. */
#pragma once

#include <glib.h>
#include <stdint.h>

/*
 * Why: qemu's usb-redir (7.2 and 10.0 alike) aborts the whole VM on the
 * second read after a stream it cannot parse (an assertion in
 * usbredir_chardev_read), so one bad header from a client would kill the
 * guest. The client's bytes are therefore run through libusbredirparser
 * in qemu's role (usb-guest) with qemu's capabilities, taken from qemu's
 * hello, and only what it parses goes on. One checker per chardev
 * connection (qemu's hello opens each).
 *
 * Packets longer than QS_USBREDIR_MAX_PACKET are refused before the
 * parser buffers them: the largest a device needs is one bulk transfer.
 */
#define QS_USBREDIR_MAX_PACKET (8u * 1024u * 1024u)
/* qemu's hello: version string and at most this many capability words. */
#define QS_USBREDIR_MAX_HELLO (64u + 4u * 32u)

typedef struct QsUsbredirCheck QsUsbredirCheck;

QsUsbredirCheck *qs_usbredir_check_new(void);
void qs_usbredir_check_free(QsUsbredirCheck *check);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsUsbredirCheck, qs_usbredir_check_free)

/* qemu's bytes, in order, until its hello is read (later ones are not
 * looked at). FALSE when qemu's first packet is not a hello. */
gboolean qs_usbredir_check_from_qemu(QsUsbredirCheck *check, const uint8_t *data,
                                     gsize len, GError **error);
/* qemu's hello has been read: the client's bytes can be judged. */
gboolean qs_usbredir_check_ready(QsUsbredirCheck *check);

/* The client's bytes, in order, once ready: TRUE when all of them may go
 * to qemu; FALSE, with an error naming the problem, when they hold
 * something qemu's usb-redir would not parse. After FALSE the stream is
 * refused for good. */
gboolean qs_usbredir_check_from_client(QsUsbredirCheck *check, const uint8_t *data,
                                       gsize len, GError **error);
