/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Signed console tokens: format, derivation, minting, one token's checks. */

#include <string.h>
#include <nettle/hmac.h>
#include "net/qs-ticket.h"
#include "net/qs-token.h"

#define BODY_BYTES 19
#define MAC_BYTES 16
#define RAW_BYTES (BODY_BYTES + MAC_BYTES)
#define PREFIX_LEN (sizeof(QS_TOKEN_PREFIX) - 1)

G_STATIC_ASSERT(PREFIX_LEN + (RAW_BYTES * 4 + 2) / 3 == QS_TOKEN_TEXT_LEN);

static const char mac_label[] = "qemu-spice token v1";
static const char key_label[] = "qemu-spice vm key v1";
static const char b64url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

const char *qs_token_status_to_string(QsTokenStatus status)
{
    switch (status) {
    case QS_TOKEN_VALID: return "valid";
    case QS_TOKEN_NOT_A_TOKEN: return "not a token";
    case QS_TOKEN_MALFORMED: return "malformed token";
    case QS_TOKEN_BAD_VERSION: return "token of an unknown version";
    case QS_TOKEN_BAD_FLAGS: return "token with unknown flags";
    case QS_TOKEN_OTHER_VM: return "token for another VM";
    case QS_TOKEN_UNKNOWN_KEY: return "token with an unknown key id";
    case QS_TOKEN_BAD_MAC: return "token with a wrong MAC (tampered or another key)";
    case QS_TOKEN_EXPIRED: return "expired token";
    case QS_TOKEN_REPLAYED: return "single-use token already used";
    case QS_TOKEN_CACHE_FULL: return "single-use token refused: too many live ones";
    }
    return "?";
}

static int hex_value(char c)
{
    return g_ascii_xdigit_value(c);
}

gboolean qs_token_parse_uuid(const char *text, guint8 uuid[QS_TOKEN_UUID_BYTES])
{
    static const guint8 dash_at[] = { 8, 13, 18, 23 };
    guint n = 0;

    if (strlen(text) != 36) {
        return FALSE;
    }
    for (guint i = 0, d = 0; i < 36;) {
        if (d < G_N_ELEMENTS(dash_at) && i == dash_at[d]) {
            if (text[i] != '-') {
                return FALSE;
            }
            d++;
            i++;
            continue;
        }
        if (hex_value(text[i]) < 0 || hex_value(text[i + 1]) < 0) {
            return FALSE;
        }
        uuid[n++] = (guint8)(hex_value(text[i]) << 4 | hex_value(text[i + 1]));
        i += 2;
    }
    return n == QS_TOKEN_UUID_BYTES;
}

gboolean qs_token_parse_hex_key(const char *hex, guint8 *out, gsize min_len,
                                gsize max_len, gsize *out_len)
{
    gsize len = strlen(hex);

    if (len % 2 || len / 2 < min_len || len / 2 > max_len) {
        return FALSE;
    }
    for (gsize i = 0; i < len / 2; i++) {
        int hi = hex_value(hex[2 * i]);
        int lo = hex_value(hex[2 * i + 1]);

        if (hi < 0 || lo < 0) {
            return FALSE;
        }
        out[i] = (guint8)(hi << 4 | lo);
    }
    if (out_len) {
        *out_len = len / 2;
    }
    return TRUE;
}

void qs_token_derive_vm_key(const guint8 *master, gsize master_len,
                            const guint8 uuid[QS_TOKEN_UUID_BYTES],
                            guint8 vm_key[QS_TOKEN_KEY_BYTES])
{
    struct hmac_sha256_ctx ctx;

    hmac_sha256_set_key(&ctx, master_len, master);
    hmac_sha256_update(&ctx, sizeof(key_label) - 1, (const guint8 *)key_label);
    hmac_sha256_update(&ctx, QS_TOKEN_UUID_BYTES, uuid);
    hmac_sha256_digest(&ctx, QS_TOKEN_KEY_BYTES, vm_key);
    explicit_bzero(&ctx, sizeof(ctx));
}

static void compute_mac(const guint8 vm_key[QS_TOKEN_KEY_BYTES],
                        const guint8 uuid[QS_TOKEN_UUID_BYTES],
                        const guint8 body[BODY_BYTES], guint8 mac[MAC_BYTES])
{
    struct hmac_sha256_ctx ctx;

    hmac_sha256_set_key(&ctx, QS_TOKEN_KEY_BYTES, vm_key);
    hmac_sha256_update(&ctx, sizeof(mac_label) - 1, (const guint8 *)mac_label);
    hmac_sha256_update(&ctx, BODY_BYTES, body);
    hmac_sha256_update(&ctx, QS_TOKEN_UUID_BYTES, uuid);
    hmac_sha256_digest(&ctx, MAC_BYTES, mac);   /* truncated: 128 bits */
    explicit_bzero(&ctx, sizeof(ctx));
}

static void encode_body(const QsTokenClaims *c, guint8 body[BODY_BYTES])
{
    body[0] = 1;
    body[1] = c->key_id;
    body[2] = c->flags;
    body[3] = (guint8)(c->expiry_s >> 24);
    body[4] = (guint8)(c->expiry_s >> 16);
    body[5] = (guint8)(c->expiry_s >> 8);
    body[6] = (guint8)c->expiry_s;
    memcpy(body + 7, c->token_id, QS_TOKEN_ID_BYTES);
    memcpy(body + 15, c->vm_tag, 4);
}

void qs_token_mint(const guint8 vm_key[QS_TOKEN_KEY_BYTES],
                   const guint8 uuid[QS_TOKEN_UUID_BYTES], QsTokenClaims *claims,
                   char text[QS_TOKEN_TEXT_LEN + 1])
{
    guint8 raw[RAW_BYTES];
    char *o = text + PREFIX_LEN;
    guint32 acc = 0;
    guint bits = 0;

    memcpy(claims->vm_tag, uuid, 4);
    encode_body(claims, raw);
    compute_mac(vm_key, uuid, raw, raw + BODY_BYTES);
    memcpy(text, QS_TOKEN_PREFIX, PREFIX_LEN);
    for (guint i = 0; i < RAW_BYTES; i++) {
        acc = acc << 8 | raw[i];
        bits += 8;
        while (bits >= 6) {
            bits -= 6;
            *o++ = b64url[(acc >> bits) & 63];
        }
    }
    if (bits) {
        *o++ = b64url[(acc << (6 - bits)) & 63];
    }
    *o = '\0';
}

static int b64url_value(char c)
{
    const char *p = c ? strchr(b64url, c) : NULL;

    return p ? (int)(p - b64url) : -1;
}

QsTokenStatus qs_token_decode(const char *text, gsize len, QsTokenClaims *claims,
                              guint8 body[BODY_BYTES], guint8 mac[MAC_BYTES])
{
    guint8 raw[RAW_BYTES];
    guint32 acc = 0;
    guint bits = 0;
    guint n = 0;

    if (len < PREFIX_LEN || memcmp(text, QS_TOKEN_PREFIX, PREFIX_LEN) != 0) {
        return QS_TOKEN_NOT_A_TOKEN;
    }
    if (len != QS_TOKEN_TEXT_LEN) {
        return QS_TOKEN_MALFORMED;
    }
    for (gsize i = PREFIX_LEN; i < len; i++) {
        int v = b64url_value(text[i]);

        if (v < 0) {
            return QS_TOKEN_MALFORMED;
        }
        acc = acc << 6 | (guint32)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            raw[n++] = (guint8)(acc >> bits);
        }
    }
    /* 35 bytes leave 2 padding bits; they must be zero (one spelling per
     * token, so a replay cannot hide behind another one). */
    if (n != RAW_BYTES || (acc & ((1u << bits) - 1)) != 0) {
        return QS_TOKEN_MALFORMED;
    }
    memcpy(body, raw, BODY_BYTES);
    memcpy(mac, raw + BODY_BYTES, MAC_BYTES);
    if (raw[0] != 1) {
        return QS_TOKEN_BAD_VERSION;
    }
    claims->key_id = raw[1];
    claims->flags = raw[2];
    claims->expiry_s = (guint32)raw[3] << 24 | (guint32)raw[4] << 16 |
                       (guint32)raw[5] << 8 | raw[6];
    memcpy(claims->token_id, raw + 7, QS_TOKEN_ID_BYTES);
    memcpy(claims->vm_tag, raw + 15, 4);
    if (claims->flags & ~(guint8)(QS_TOKEN_FLAG_VIEW_ONLY | QS_TOKEN_FLAG_SINGLE_USE)) {
        return QS_TOKEN_BAD_FLAGS;
    }
    return QS_TOKEN_VALID;
}

gboolean qs_token_mac_ok(const guint8 vm_key[QS_TOKEN_KEY_BYTES],
                         const guint8 uuid[QS_TOKEN_UUID_BYTES],
                         const guint8 body[BODY_BYTES], const guint8 mac[MAC_BYTES])
{
    guint8 want[MAC_BYTES];
    gboolean ok;

    compute_mac(vm_key, uuid, body, want);
    ok = qs_const_time_equal(want, MAC_BYTES, mac, MAC_BYTES);
    explicit_bzero(want, sizeof(want));
    return ok;
}

char *qs_token_redact_hex(const char *msg)
{
    GString *out = g_string_new(NULL);

    for (const char *p = msg; *p;) {
        gsize run = 0;

        while (g_ascii_isxdigit(p[run])) {
            run++;
        }
        if (run >= QS_TOKEN_REDACT_HEX_MIN) {
            g_string_append(out, "[hex left out]");
        } else {
            g_string_append_len(out, p, (gssize)MAX(run, 1));
        }
        p += MAX(run, 1);
    }
    return g_string_free(out, FALSE);
}
