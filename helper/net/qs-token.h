/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Signed console tokens: the byte format, key derivation, minting and
 * checking one token. Pure (no clock, no I/O): the helper's verifier
 * (qs-token-verifier.h) and the launcher's `token` command share it, and
 * docs/integration.md specifies the same bytes for clouds that mint their own.
 *
 * A token is "qst." followed by the unpadded base64url of 35 bytes:
 *   0      version (1)
 *   1      key id (1-255)
 *   2      flags: bit 0 view-only, bit 1 single use; others must be 0
 *   3-6    expiry, Unix seconds, big-endian
 *   7-14   token id (random)
 *   15-18  the first 4 bytes of the VM's UUID
 *   19-34  HMAC-SHA256(vm key, "qemu-spice token v1" || bytes 0-18 ||
 *          the VM's 16-byte UUID), first 16 bytes
 * The vm key is HMAC-SHA256(master key, "qemu-spice vm key v1" || UUID):
 * the helper only ever holds the key of its own VM. 51 characters, so a
 * token fits SPICE's 60-byte ticket field. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define QS_TOKEN_PREFIX "qst."
#define QS_TOKEN_TEXT_LEN 51
#define QS_TOKEN_KEY_BYTES 32
#define QS_TOKEN_UUID_BYTES 16
#define QS_TOKEN_ID_BYTES 8
#define QS_TOKEN_MASTER_MIN_BYTES 16
#define QS_TOKEN_MASTER_MAX_BYTES 64

enum {
    QS_TOKEN_FLAG_VIEW_ONLY = 1u << 0,
    QS_TOKEN_FLAG_SINGLE_USE = 1u << 1,
};

typedef struct {
    guint8 key_id;
    guint8 flags;
    guint32 expiry_s;
    guint8 token_id[QS_TOKEN_ID_BYTES];
    guint8 vm_tag[4];
} QsTokenClaims;

/* What decoding or checking a token found; every refusal has its name
 * for the log (qs_token_status_to_string). */
typedef enum {
    QS_TOKEN_VALID,
    QS_TOKEN_NOT_A_TOKEN,  /* no "qst." prefix: maybe a fixed ticket */
    QS_TOKEN_MALFORMED,    /* the prefix, but not the length or alphabet */
    QS_TOKEN_BAD_VERSION,
    QS_TOKEN_BAD_FLAGS,
    QS_TOKEN_OTHER_VM,
    QS_TOKEN_UNKNOWN_KEY,
    QS_TOKEN_BAD_MAC,      /* tampered, or minted with another key */
    QS_TOKEN_EXPIRED,
    QS_TOKEN_REPLAYED,     /* a single-use token seen before */
    QS_TOKEN_CACHE_FULL,   /* too many live single-use tokens to track */
} QsTokenStatus;

const char *qs_token_status_to_string(QsTokenStatus status);

/* "8-4-4-4-12" hex, either case. */
gboolean qs_token_parse_uuid(const char *text, guint8 uuid[QS_TOKEN_UUID_BYTES]);

void qs_token_derive_vm_key(const guint8 *master, gsize master_len,
                            const guint8 uuid[QS_TOKEN_UUID_BYTES],
                            guint8 vm_key[QS_TOKEN_KEY_BYTES]);

/* Writes QS_TOKEN_TEXT_LEN characters and a NUL into `text`;
 * claims->vm_tag is set from `uuid`. */
void qs_token_mint(const guint8 vm_key[QS_TOKEN_KEY_BYTES],
                   const guint8 uuid[QS_TOKEN_UUID_BYTES], QsTokenClaims *claims,
                   char text[QS_TOKEN_TEXT_LEN + 1]);

/* Decodes the text (at most `len` bytes, no NUL needed) into the claims and
 * the signed bytes; checks only the form. */
QsTokenStatus qs_token_decode(const char *text, gsize len, QsTokenClaims *claims,
                              guint8 body[19], guint8 mac[16]);

/* Is `mac` the MAC of `body` under `vm_key` for `uuid`? Constant time. */
gboolean qs_token_mac_ok(const guint8 vm_key[QS_TOKEN_KEY_BYTES],
                         const guint8 uuid[QS_TOKEN_UUID_BYTES],
                         const guint8 body[19], const guint8 mac[16]);

/* Parses a hex key ("64 hex digits" for a vm key; 32-128 for a master key). */
gboolean qs_token_parse_hex_key(const char *hex, guint8 *out, gsize min_len,
                                gsize max_len, gsize *out_len);

/* `msg` with every run of QS_TOKEN_REDACT_HEX_MIN or more hex digits left
 * out: GKeyFile quotes a line it cannot parse, and a key written without
 * its "ID=" or "key-ID=" is such a line. For errors about key files. */
#define QS_TOKEN_REDACT_HEX_MIN 16
char *qs_token_redact_hex(const char *msg);

G_END_DECLS
