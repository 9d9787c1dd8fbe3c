/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A tiny SPICE vdagent on com.redhat.spice.0 (text and image clipboard; with keydraw.agent=spice also file transfer, as spice-vdagent toward a SPICE server), driven by serial commands. */
#define _GNU_SOURCE
#include "keydraw.h"
#include "keydraw-agent.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <spice/vd_agent.h>

/* Toward a SPICE server we also take monitors configs (and print them);
 * qemu's vdagent would start sending them on its own resizes. */
static uint32_t our_caps(const struct agent *a)
{
    return OUR_CAPS | (a->spice ? CAP(VD_AGENT_CAP_MONITORS_CONFIG) : 0);
}

static bool both(const struct agent *a, unsigned cap)
{
    return (a->peer_caps & CAP(cap)) && (our_caps(a) & CAP(cap));
}

static void write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            kd_say("WARN agent write errno=%d", errno);
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

/* One message in chunks of at most VD_AGENT_MAX_DATA_SIZE, as the agent
 * protocol asks of the guest side. */
void agent_send_msg(struct agent *a, uint32_t type, const uint8_t *data, uint32_t size)
{
    size_t total = sizeof(VDAgentMessage) + size;
    uint8_t *buf = malloc(total);
    VDAgentMessage hdr = {
        .protocol = VD_AGENT_PROTOCOL, .type = type, .opaque = 0, .size = size,
    };

    if (!buf)
        kd_fail("reason=agent-oom size=%zu", total);
    memcpy(buf, &hdr, sizeof(hdr));
    if (size)
        memcpy(buf + sizeof(hdr), data, size);
    for (size_t off = 0; off < total;) {
        size_t n = total - off < VD_AGENT_MAX_DATA_SIZE ? total - off : VD_AGENT_MAX_DATA_SIZE;
        VDIChunkHeader ch = { .port = VDP_CLIENT_PORT, .size = (uint32_t)n };

        write_all(a->port, (const uint8_t *)&ch, sizeof(ch));
        write_all(a->port, buf + off, n);
        off += n;
    }
    free(buf);
}

static void send_caps(struct agent *a, bool request)
{
    uint8_t b[8];

    put_u32(b, request);
    put_u32(b + 4, our_caps(a));
    agent_send_msg(a, VD_AGENT_ANNOUNCE_CAPABILITIES, b, sizeof(b));
    a->caps_sent = true;
}

/* The optional selection header: present when both sides announced it. */
static size_t put_selection(const struct agent *a, uint8_t *p, uint8_t sel)
{
    if (!both(a, VD_AGENT_CAP_CLIPBOARD_SELECTION))
        return 0;
    p[0] = sel;
    p[1] = p[2] = p[3] = 0;
    return 4;
}

static void grab(struct agent *a, uint8_t sel, uint32_t type, uint8_t *text, size_t len)
{
    uint8_t b[12];
    size_t n = put_selection(a, b, sel);
    uint32_t serial = a->serial[sel];

    free(a->owned[sel]);
    a->owned[sel] = text;
    a->owned_len[sel] = len;
    a->owned_type[sel] = type;
    if (both(a, VD_AGENT_CAP_CLIPBOARD_GRAB_SERIAL)) {
        put_u32(b + n, serial);
        n += 4;
        a->serial[sel]++;
    }
    put_u32(b + n, type);
    n += 4;
    agent_send_msg(a, VD_AGENT_CLIPBOARD_GRAB, b, (uint32_t)n);
    kd_say("AGENT grabbed sel=%u serial=%u type=%u len=%zu", sel, serial, type, len);
}

static void release(struct agent *a, uint8_t sel)
{
    uint8_t b[4];
    size_t n = put_selection(a, b, sel);

    free(a->owned[sel]);
    a->owned[sel] = NULL;
    a->owned_len[sel] = 0;
    agent_send_msg(a, VD_AGENT_CLIPBOARD_RELEASE, b, (uint32_t)n);
    kd_say("AGENT released sel=%u", sel);
}

/* FNV-1a: lets the test check texts too long for one serial line. */
uint32_t agent_fnv1a_more(uint32_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 16777619u;
    }
    return h;
}

static uint32_t fnv1a(const uint8_t *p, size_t n)
{
    return agent_fnv1a_more(FNV_START, p, n);
}

static void say_clipboard(uint8_t sel, uint32_t type, const uint8_t *p, size_t n)
{
    char shown[SHOW_MAX * 4 + 1];
    size_t o = 0;

    /* Control bytes and backslashes escaped: one line whatever the text. */
    for (size_t i = 0; i < n && i < SHOW_MAX; i++) {
        if (p[i] < 0x20 || p[i] == 0x7f || p[i] == '\\')
            o += (size_t)snprintf(shown + o, sizeof(shown) - o, "\\x%02x", p[i]);
        else
            shown[o++] = (char)p[i];
    }
    shown[o] = '\0';
    kd_say("CLIPBOARD sel=%u type=%u len=%zu fnv=%08x text=%s", sel, type, n,
           fnv1a(p, n), shown);
}

/* ---- from qemu ---------------------------------------------------------------- */

static void on_caps(struct agent *a, const uint8_t *p, uint32_t n)
{
    uint32_t request;

    if (n < 8) {
        kd_say("WARN agent caps size=%u", n);
        return;
    }
    request = get_u32(p);
    a->peer_caps = get_u32(p + 4);
    if (a->spice) {
        /* As spice-vdagent: each client asks anew and gets our caps. A
         * server asking for ours on its own (a helper taking a port we
         * had open) carries no caps: only a client's make us ready. */
        if (request)
            send_caps(a, false);
        if (!a->ready && a->peer_caps) {
            a->ready = true;
            kd_say("AGENT ready caps=%08x", a->peer_caps);
        }
        return;
    }
    /* Our caps went out with request=1 at connect, so qemu has them (or will
     * in a moment) and answers: a second copy would only make qemu reset the
     * clipboard serials again, which costs a reconnection. */
    if (request && !a->caps_sent)
        send_caps(a, false);
    /* qemu answers our request only after it took our caps in: from then
     * on its clipboard peer is registered. */
    if (!request && !a->ready) {
        a->ready = true;
        kd_say("AGENT ready caps=%08x", a->peer_caps);
    }
}

static void on_clipboard_msg(struct agent *a, uint32_t type, const uint8_t *p, uint32_t n)
{
    uint8_t sel = VD_AGENT_CLIPBOARD_SELECTION_CLIPBOARD;
    uint8_t b[8];
    size_t o;

    if (both(a, VD_AGENT_CAP_CLIPBOARD_SELECTION)) {
        if (n < 4)
            return;
        sel = p[0];
        p += 4;
        n -= 4;
    }
    if (sel >= SELECTIONS) {
        kd_say("WARN agent selection=%u", sel);
        return;
    }
    switch (type) {
    case VD_AGENT_CLIPBOARD_GRAB: {
        bool text = false, png = false;

        if (both(a, VD_AGENT_CAP_CLIPBOARD_GRAB_SERIAL)) {
            uint32_t serial;

            if (n < 4)
                return;
            serial = get_u32(p);
            /* Our next grab must not lose to the one qemu just made. */
            if (serial + 1 > a->serial[sel])
                a->serial[sel] = serial + 1;
            p += 4;
            n -= 4;
        }
        for (uint32_t i = 0; i + 4 <= n; i += 4) {
            text |= get_u32(p + i) == VD_AGENT_CLIPBOARD_UTF8_TEXT;
            png |= get_u32(p + i) == VD_AGENT_CLIPBOARD_IMAGE_PNG;
        }
        free(a->owned[sel]);
        a->owned[sel] = NULL;
        a->owned_len[sel] = 0;
        kd_say("AGENT grab sel=%u text=%d%s", sel, text, png ? " png=1" : "");
        if (text || png) {
            o = put_selection(a, b, sel);
            put_u32(b + o, text ? VD_AGENT_CLIPBOARD_UTF8_TEXT : VD_AGENT_CLIPBOARD_IMAGE_PNG);
            agent_send_msg(a, VD_AGENT_CLIPBOARD_REQUEST, b, (uint32_t)o + 4);
        }
        break;
    }
    case VD_AGENT_CLIPBOARD_REQUEST: {
        uint32_t want = n >= 4 ? get_u32(p) : VD_AGENT_CLIPBOARD_NONE;
        bool have = a->owned[sel] && want == a->owned_type[sel];
        size_t len = have ? a->owned_len[sel] : 0;
        uint8_t *reply = malloc(8 + len);

        if (!reply)
            kd_fail("reason=agent-oom size=%zu", len);
        o = put_selection(a, reply, sel);
        put_u32(reply + o, have ? want : VD_AGENT_CLIPBOARD_NONE);
        o += 4;
        if (len)
            memcpy(reply + o, a->owned[sel], len);
        agent_send_msg(a, VD_AGENT_CLIPBOARD, reply, (uint32_t)(o + len));
        free(reply);
        kd_say("AGENT request sel=%u type=%u answered=%zu", sel, want, len);
        break;
    }
    case VD_AGENT_CLIPBOARD:
        if (n < 4)
            return;
        say_clipboard(sel, get_u32(p), p + 4, n - 4);
        break;
    case VD_AGENT_CLIPBOARD_RELEASE:
        kd_say("AGENT release sel=%u", sel);
        break;
    }
}

static void on_msg(struct agent *a)
{
    const uint8_t *p = a->msg;
    uint32_t n = a->hdr.size;

    if (a->hdr.protocol != VD_AGENT_PROTOCOL) {
        kd_say("WARN agent protocol=%u", a->hdr.protocol);
        return;
    }
    switch (a->hdr.type) {
    case VD_AGENT_ANNOUNCE_CAPABILITIES:
        on_caps(a, p, n);
        break;
    case VD_AGENT_CLIPBOARD_GRAB:
    case VD_AGENT_CLIPBOARD_REQUEST:
    case VD_AGENT_CLIPBOARD:
    case VD_AGENT_CLIPBOARD_RELEASE:
        on_clipboard_msg(a, a->hdr.type, p, n);
        break;
    case VD_AGENT_FILE_XFER_START:
    case VD_AGENT_FILE_XFER_DATA:
    case VD_AGENT_FILE_XFER_STATUS:
        agent_on_xfer_msg(a, a->hdr.type, p, n);
        break;
    case VD_AGENT_MONITORS_CONFIG:
        /* {u32 count; u32 flags; count x {u32 height, width, depth; i32 x, y}} */
        if (n >= 8 + 20 && get_u32(p) >= 1)
            kd_say("AGENT monitors n=%u first=%ux%u+%d+%d", get_u32(p), get_u32(p + 12),
                   get_u32(p + 8), (int32_t)get_u32(p + 20), (int32_t)get_u32(p + 24));
        else
            kd_say("AGENT monitors size=%u", n);
        break;
    default:
        break;      /* mouse state and the like: not ours */
    }
}

/* The payloads of the client port's chunks, concatenated, are the message
 * stream; a message may span chunks. */
static void feed_payload(struct agent *a, const uint8_t *p, size_t n)
{
    while (n) {
        size_t take;

        if (a->skip) {
            take = n < a->skip ? n : a->skip;
            a->skip -= (uint32_t)take;
        } else if (a->hdr_have < sizeof(a->hdr)) {
            take = sizeof(a->hdr) - a->hdr_have;
            take = n < take ? n : take;
            memcpy((uint8_t *)&a->hdr + a->hdr_have, p, take);
            a->hdr_have += take;
            if (a->hdr_have == sizeof(a->hdr)) {
                if (a->hdr.size > MSG_MAX) {
                    kd_say("WARN agent message type=%u size=%u dropped",
                           a->hdr.type, a->hdr.size);
                    a->skip = a->hdr.size;
                    a->hdr_have = 0;
                } else {
                    a->msg = malloc(a->hdr.size ? a->hdr.size : 1);
                    if (!a->msg)
                        kd_fail("reason=agent-oom size=%u", a->hdr.size);
                    a->msg_have = 0;
                }
            }
        } else {
            take = a->hdr.size - a->msg_have;
            take = n < take ? n : take;
            memcpy(a->msg + a->msg_have, p, take);
            a->msg_have += (uint32_t)take;
        }
        p += take;
        n -= take;
        if (a->msg && a->hdr_have == sizeof(a->hdr) && a->msg_have == a->hdr.size) {
            on_msg(a);
            free(a->msg);
            a->msg = NULL;
            a->hdr_have = 0;
        }
    }
}

static void feed_port(struct agent *a, const uint8_t *p, size_t n)
{
    while (n) {
        size_t take;

        if (a->chunk_have < sizeof(a->chunk)) {
            take = sizeof(a->chunk) - a->chunk_have;
            take = n < take ? n : take;
            memcpy((uint8_t *)&a->chunk + a->chunk_have, p, take);
            a->chunk_have += take;
            if (a->chunk_have == sizeof(a->chunk))
                a->chunk_left = a->chunk.size;
        } else {
            take = n < a->chunk_left ? n : a->chunk_left;
            if (a->chunk.port == VDP_CLIENT_PORT)
                feed_payload(a, p, take);
            else if (a->chunk.port == VDP_SERVER_PORT && a->spice)
                agent_feed_server(a, p, take);
            a->chunk_left -= (uint32_t)take;
        }
        p += take;
        n -= take;
        if (a->chunk_have == sizeof(a->chunk) && a->chunk_left == 0)
            a->chunk_have = 0;
    }
}

/* ---- from the test, on the serial console ------------------------------------ */

static void on_command(struct agent *a, char *line)
{
    if (strncmp(line, "COPY ", 5) == 0) {
        grab(a, 0, VD_AGENT_CLIPBOARD_UTF8_TEXT, (uint8_t *)strdup(line + 5), strlen(line + 5));
    } else if (strncmp(line, "COPYREP ", 8) == 0 || strncmp(line, "COPYIMG ", 8) == 0) {
        /* COPYREP <bytes> <pattern>: texts longer than a tty line;
         * COPYIMG the same bytes offered as image/png (not examined by
         * the agents or the server on the way). */
        char *pat = NULL;
        unsigned long len = strtoul(line + 8, &pat, 10);
        uint32_t type = line[4] == 'I' ? VD_AGENT_CLIPBOARD_IMAGE_PNG
                                       : VD_AGENT_CLIPBOARD_UTF8_TEXT;
        size_t plen;
        uint8_t *text;

        if (!pat || *pat != ' ' || len == 0 || len > MSG_MAX - 16 || !pat[1]) {
            kd_say("WARN agent command=COPYREP bad arguments");
            return;
        }
        pat++;
        plen = strlen(pat);
        text = malloc(len);
        if (!text)
            kd_fail("reason=agent-oom size=%lu", len);
        for (size_t i = 0; i < len; i++)
            text[i] = (uint8_t)pat[i % plen];
        grab(a, 0, type, text, len);
    } else if (strcmp(line, "RELEASE") == 0) {
        release(a, 0);
    } else if (strcmp(line, "FLOOD") == 0 && a->spice) {
        agent_flood(a);
    } else if (strcmp(line, "BADCHUNK") == 0 && a->spice) {
        /* A chunk for a port that does not exist: the server must give up
         * on this stream (and may reset the port). One write: the server
         * may hang up on seeing the header, and a second write would then
         * wait in the port until qemu reconnects, land on the new
         * connection and hide the hang-up from us. */
        VDIChunkHeader ch = { .port = 7, .size = 4 };
        uint8_t chunk[sizeof(ch) + 4];

        memcpy(chunk, &ch, sizeof(ch));
        memcpy(chunk + sizeof(ch), "bad!", 4);
        write_all(a->port, chunk, sizeof(chunk));
        kd_say("AGENT badchunk sent");
    } else if (strncmp(line, "RESTART ", 8) == 0) {
        /* spice-vdagentd stopping and starting again: the port closed
         * for a while, then opened afresh (the main loop does it). */
        unsigned long ms = strtoul(line + 8, NULL, 10);

        a->restart_ms = ms > 0 && ms <= 60000 ? (unsigned)ms : 1000;
    } else if (line[0]) {
        kd_say("WARN agent command unknown: %.40s", line);
    }
}

static void feed_tty(struct agent *a, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n' || p[i] == '\r') {
            a->cmd[a->cmd_len] = '\0';
            if (a->cmd_len)
                on_command(a, a->cmd);
            a->cmd_len = 0;
        } else if (a->cmd_len < CMD_MAX - 1) {
            a->cmd[a->cmd_len++] = p[i];
        }
    }
}

/* ---- setup ---------------------------------------------------------------------- */

static int open_tty(void)
{
    struct termios t;
    int fd = open("/dev/console", O_RDONLY | O_NOCTTY | O_CLOEXEC);

    if (fd < 0)
        fd = open("/dev/ttyS0", O_RDONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    /* No echo: the commands must not come back as serial lines. */
    if (tcgetattr(fd, &t) == 0) {
        t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
        t.c_iflag &= ~(tcflag_t)(IXON | IXOFF);
        tcsetattr(fd, TCSANOW, &t);
    }
    return fd;
}

/* Opens the port once the host side is connected (poll says POLLHUP until
 * then) and announces our capabilities; a new connection starts afresh. */
static bool connect_port(struct agent *a, const char *dev)
{
    struct pollfd pfd = { .events = POLLOUT };

    for (int i = 0; i < 100; i++) {
        /* devtmpfs creates the node a moment after sysfs has the name. */
        a->port = open(dev, O_RDWR | O_CLOEXEC);
        if (a->port >= 0) {
            pfd.fd = a->port;
            if (poll(&pfd, 1, 200) == 1 && (pfd.revents & POLLOUT) &&
                !(pfd.revents & POLLHUP))
                break;
            close(a->port);
            a->port = -1;
        }
        usleep(100 * 1000);
    }
    if (a->port < 0) {
        kd_say("WARN agent port=%s not connected errno=%d", dev, errno);
        return false;
    }
    free(a->msg);
    a->msg = NULL;
    a->chunk_have = a->hdr_have = 0;
    a->chunk_left = a->skip = 0;
    a->srv_have = 0;
    a->caps_sent = false;
    agent_forget_client(a);
    for (int s = 0; s < SELECTIONS; s++)
        a->serial[s] = 0;
    kd_say("AGENT port=%s", dev);
    send_caps(a, true);
    return true;
}

static void *agent_main(void *arg)
{
    struct agent *a = arg;
    char dev[300];

    kd_load_modules(2);
    if (!kd_vport_wait(PORT_NAME, dev, sizeof(dev), PORT_WAIT_S)) {
        kd_say("WARN agent port=%s not found", PORT_NAME);
        return NULL;
    }
    a->tty = open_tty();
    if (a->tty < 0)
        kd_say("WARN agent serial input errno=%d", errno);
    if (!connect_port(a, dev))
        return NULL;

    for (;;) {
        struct pollfd pfd[2] = {
            { .fd = a->port, .events = POLLIN },
            { .fd = a->tty, .events = POLLIN },
        };
        uint8_t buf[4096];
        ssize_t n;

        if (poll(pfd, a->tty >= 0 ? 2 : 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            kd_say("WARN agent poll errno=%d", errno);
            return NULL;
        }
        if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            n = read(a->port, buf, sizeof(buf));
            if (n > 0) {
                feed_port(a, buf, (size_t)n);
            } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                /* The host closed its side: qemu's agent does that to reset
                 * the grab serials when a clipboard peer registers, and
                 * connects again once we have closed ours. */
                kd_say("AGENT host-closed errno=%d", n == 0 ? 0 : errno);
                close(a->port);
                a->port = -1;
                usleep(100 * 1000);
                if (!connect_port(a, dev))
                    return NULL;
                continue;
            }
        }
        if (a->tty >= 0 && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR))) {
            n = read(a->tty, buf, sizeof(buf));
            if (n > 0)
                feed_tty(a, (const char *)buf, (size_t)n);
        }
        if (a->restart_ms) {
            kd_say("AGENT port-closed ms=%u", a->restart_ms);
            close(a->port);
            a->port = -1;
            usleep(a->restart_ms * 1000u);
            a->restart_ms = 0;
            if (!connect_port(a, dev))
                return NULL;
        }
    }
    return NULL;
}

void kd_agent_start(bool spice)
{
    static struct agent agent = { .port = -1, .tty = -1 };
    pthread_t th;

    agent.spice = spice;
    if (pthread_create(&th, NULL, agent_main, &agent) != 0) {
        kd_say("WARN agent thread errno=%d", errno);
        return;
    }
    pthread_detach(th);
}
