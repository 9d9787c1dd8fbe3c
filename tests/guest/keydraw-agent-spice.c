/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The test guest's vdagent toward a SPICE server (keydraw.agent=spice): file transfer, the server port, the flood command. */
#include "keydraw.h"
#include "keydraw-agent.h"

#include <stdlib.h>
#include <string.h>

/* ---- file transfer (keydraw.agent=spice) --------------------------------------- */

static void xfer_status(struct agent *a, uint32_t id, uint32_t result)
{
    uint8_t b[8];

    put_u32(b, id);
    put_u32(b + 4, result);
    agent_send_msg(a, VD_AGENT_FILE_XFER_STATUS, b, sizeof(b));
}

/* The value of `key=` in START's key file, or "" */
static void keyfile_value(const uint8_t *p, uint32_t n, const char *key, char *out, size_t size)
{
    size_t klen = strlen(key);

    out[0] = '\0';
    for (uint32_t i = 0; i < n;) {
        uint32_t end = i;

        while (end < n && p[end] != '\n')
            end++;
        if (end - i > klen && memcmp(p + i, key, klen) == 0 && p[i + klen] == '=') {
            size_t len = end - i - klen - 1;

            len = len < size - 1 ? len : size - 1;
            memcpy(out, p + i + klen + 1, len);
            out[len] = '\0';
            return;
        }
        i = end + 1;
    }
}

static void xfer_done(struct agent *a)
{
    kd_say("FILEXFER done id=%u name=%s len=%llu fnv=%08x", a->xfer_id, a->xfer_name,
           (unsigned long long)a->xfer_have, a->xfer_fnv);
    xfer_status(a, a->xfer_id, VD_AGENT_FILE_XFER_STATUS_SUCCESS);
    a->xfer = false;
}

void agent_on_xfer_msg(struct agent *a, uint32_t type, const uint8_t *p, uint32_t n)
{
    char size[32];

    if (!a->spice || n < 4) {
        kd_say("WARN agent file transfer message type=%u size=%u", type, n);
        return;
    }
    switch (type) {
    case VD_AGENT_FILE_XFER_START:
        if (a->xfer) {
            xfer_status(a, get_u32(p), VD_AGENT_FILE_XFER_STATUS_ERROR);
            kd_say("WARN agent file transfer id=%u while id=%u runs", get_u32(p), a->xfer_id);
            return;
        }
        a->xfer = true;
        a->xfer_id = get_u32(p);
        keyfile_value(p + 4, n - 4, "name", a->xfer_name, sizeof(a->xfer_name));
        keyfile_value(p + 4, n - 4, "size", size, sizeof(size));
        a->xfer_size = strtoull(size, NULL, 10);
        a->xfer_have = 0;
        a->xfer_fnv = FNV_START;
        kd_say("FILEXFER start id=%u name=%s size=%llu", a->xfer_id, a->xfer_name,
               (unsigned long long)a->xfer_size);
        xfer_status(a, a->xfer_id, VD_AGENT_FILE_XFER_STATUS_CAN_SEND_DATA);
        if (a->xfer_size == 0)
            xfer_done(a);
        break;
    case VD_AGENT_FILE_XFER_DATA: {
        uint64_t len;

        if (n < 12 || !a->xfer || get_u32(p) != a->xfer_id) {
            kd_say("WARN agent file data size=%u for no transfer", n);
            return;
        }
        len = (uint64_t)get_u32(p + 4) | (uint64_t)get_u32(p + 8) << 32;
        if (len != n - 12 || a->xfer_have + len > a->xfer_size) {
            kd_say("WARN agent file data len=%llu in %u bytes (have %llu of %llu)",
                   (unsigned long long)len, n, (unsigned long long)a->xfer_have,
                   (unsigned long long)a->xfer_size);
            xfer_status(a, a->xfer_id, VD_AGENT_FILE_XFER_STATUS_ERROR);
            a->xfer = false;
            return;
        }
        a->xfer_fnv = agent_fnv1a_more(a->xfer_fnv, p + 12, (size_t)len);
        a->xfer_have += len;
        if (a->xfer_have == a->xfer_size)
            xfer_done(a);
        break;
    }
    case VD_AGENT_FILE_XFER_STATUS:
        kd_say("FILEXFER status id=%u result=%u", get_u32(p), n >= 8 ? get_u32(p + 4) : 0);
        if (a->xfer && get_u32(p) == a->xfer_id)
            a->xfer = false;
        break;
    }
}

void agent_forget_client(struct agent *a)
{
    a->peer_caps = 0;
    a->ready = false;
    a->xfer = false;
    for (int s = 0; s < SELECTIONS; s++) {
        free(a->owned[s]);
        a->owned[s] = NULL;
        a->owned_len[s] = 0;
    }
}

/* The server port carries header-only messages: CLIENT_DISCONNECTED. */
void agent_feed_server(struct agent *a, const uint8_t *p, size_t n)
{
    while (n) {
        size_t take = sizeof(a->srv) - a->srv_have;

        take = n < take ? n : take;
        memcpy(a->srv + a->srv_have, p, take);
        a->srv_have += take;
        p += take;
        n -= take;
        if (a->srv_have == sizeof(a->srv)) {
            uint32_t type = get_u32(a->srv + 4);

            a->srv_have = 0;
            if (type == VD_AGENT_CLIENT_DISCONNECTED) {
                kd_say("AGENT client-disconnected");
                agent_forget_client(a);
            } else {
                kd_say("WARN agent server message type=%u", type);
            }
        }
    }
}

/* FLOOD: well-framed clipboard messages written for ever, as fast as the
 * port takes them (the thread blocks when the host stops reading); a line
 * after each one (what the host's buffers hold may be less than a few). */
void agent_flood(struct agent *a)
{
    static uint8_t body[FLOOD_MSG];
    uint64_t n = 0;

    kd_say("AGENT flood start");
    for (;;) {
        agent_send_msg(a, VD_AGENT_CLIPBOARD, body, sizeof(body));
        n += sizeof(body);
        kd_say("AGENT flood n=%llu", (unsigned long long)n);
    }
}

