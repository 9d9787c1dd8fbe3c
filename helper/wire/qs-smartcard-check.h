/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsSmartcardCheck: the smartcard channel's VSCard messages between a SPICE client and qemu's ccid-card-passthru, checked and translated as spice-server does. */
#pragma once

#include <glib.h>
#include <stdint.h>

/*
 * Both sides speak libcacard's VSCard messages (a header of type,
 * reader id and length, then the body), but differently:
 *
 * - the client sends one message per SMARTCARD_DATA with the header in
 *   little endian (SPICE's order); qemu's chardev wants a byte stream of
 *   them with the header in network order;
 * - qemu's reader ids are its own (it has one reader); the SPICE side's
 *   are the server's, one per reader it offers. We offer one reader, id
 *   0, and write it into qemu's messages as spice-server does;
 * - the reader's add and remove are the server's business: the client's
 *   name for its reader does not go to qemu (an empty ReaderAdd does), a
 *   second reader is refused (VSC_CANNOT_ADD_MORE_READERS, as spice-server
 *   answers when no reader is free), and a client that goes with its
 *   reader added has it removed; qemu's answer to that remove is for
 *   nobody and is not passed to the next client;
 * - VSC_Init is each side's greeting to its peer: qemu's is not passed on,
 *   the client's is ignored.
 *
 * Why check: qemu's passthru (7.2 and 10.0, tried) gathers each message
 * in a 64 KiB buffer and reads its chardev only while that has room: a
 * header announcing more fills it and qemu never reads the chardev again,
 * across reconnections too (the VM keeps a reader that never works
 * again). It also reads a VSC_Error's code and a VSC_Init's fields
 * without checking the message's length (stale bytes, not a crash on a
 * 64-bit host: the capability count of a short VSC_Init comes out
 * negative). So, as spice-server does, only the types it passes on go to
 * qemu, for the reader added, whole, and no longer than
 * QS_SMARTCARD_MAX_BODY; anything else closes the client's channel with
 * an error naming it.
 */
/* qemu's receive buffer is 64 KiB, header included. */
#define QS_SMARTCARD_MAX_BODY (64u * 1024u - 12u)
/* The one reader we offer. */
#define QS_SMARTCARD_READER_ID 0u

typedef struct QsSmartcardCheck QsSmartcardCheck;

QsSmartcardCheck *qs_smartcard_check_new(void);
void qs_smartcard_check_free(QsSmartcardCheck *check);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsSmartcardCheck, qs_smartcard_check_free)

/* One SMARTCARD_DATA body from the client. Appends what goes to qemu to
 * `to_qemu` (network-order stream) and what the server answers itself to
 * `replies` (GBytes, little-endian messages for SMARTCARD_DATA). FALSE,
 * with an error naming the problem, when the client's message is
 * malformed or out of turn; the channel is then closed. */
gboolean qs_smartcard_check_from_client(QsSmartcardCheck *check, const uint8_t *data,
                                        gsize len, GByteArray *to_qemu, GPtrArray *replies,
                                        GError **error);

/* qemu's bytes, in order: each whole message goes to `to_client` (GBytes,
 * little endian, our reader id). A message longer than
 * QS_SMARTCARD_MAX_BODY is skipped (logged once per message): qemu's own
 * messages are APDUs of a few KiB. */
void qs_smartcard_check_from_qemu(QsSmartcardCheck *check, const uint8_t *data, gsize len,
                                  GPtrArray *to_client);

/* The client's channel went: what qemu needs to hear (a ReaderRemove if
 * the reader was added) goes to `to_qemu`; qemu's answer to it will be
 * dropped. */
void qs_smartcard_check_client_gone(QsSmartcardCheck *check, GByteArray *to_qemu);
/* qemu's end reconnected: its stream starts afresh. */
void qs_smartcard_check_qemu_reset(QsSmartcardCheck *check);
/* The client's reader is added. */
gboolean qs_smartcard_check_reader_added(QsSmartcardCheck *check);
