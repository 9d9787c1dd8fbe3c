/* SPDX-License-Identifier: GPL-2.0-or-later */
/* keydraw.webdav=FILE: a folder-sharing client on the virtio port org.spice-space.webdav.0, as spice-webdavd would be: a PROPFIND of the shared folder and a GET of FILE, WEBDAV lines. */
#define _GNU_SOURCE
#include "keydraw.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/*
 * The port carries many HTTP connections at once, multiplexed the way
 * spice-webdavd and spice-gtk's webdav channel do it: each frame is the
 * connection's id (int64, little endian), the byte count (uint16, little
 * endian) and that many bytes. The guest side picks the ids; the first
 * frame of a new id opens a connection to the client's WebDAV server, and
 * the client answers a closed connection with an empty frame of its id.
 * Each request here is its own connection with "Connection: close".
 */
#define WD_PORT "org.spice-space.webdav.0"
#define WD_PORT_WAIT_S 60
#define WD_REPLY_WAIT_S 180
#define WD_FRAME_MAX 65535u
/* Bounds the answer we keep: the test's folder is small. */
#define WD_REPLY_MAX (8u * 1024u * 1024u)

struct wd_buf {
    uint8_t *data;
    size_t len;
};

static char get_name[128];

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads exactly n bytes before the deadline (CLOCK_MONOTONIC seconds). */
static int read_full(int fd, uint8_t *p, size_t n, time_t deadline)
{
    while (n > 0) {
        struct timespec now;
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        ssize_t r;

        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec >= deadline) {
            errno = ETIMEDOUT;
            return -1;
        }
        if (poll(&pfd, 1, 1000) <= 0)
            continue;
        r = read(fd, p, n);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = EPIPE;
            return -1;
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int mux_send(int fd, uint64_t id, const uint8_t *data, size_t len)
{
    do {
        size_t n = len > WD_FRAME_MAX ? WD_FRAME_MAX : len;
        uint8_t head[10];

        for (int i = 0; i < 8; i++)
            head[i] = (uint8_t)(id >> (8 * i));
        head[8] = (uint8_t)n;
        head[9] = (uint8_t)(n >> 8);
        if (write_all(fd, head, sizeof(head)) < 0 || write_all(fd, data, n) < 0)
            return -1;
        data += n;
        len -= n;
    } while (len > 0);
    return 0;
}

/* One frame into buf (WD_FRAME_MAX bytes); its id and size. */
static int mux_recv(int fd, uint64_t *id, uint8_t *buf, size_t *size, time_t deadline)
{
    uint8_t head[10];

    if (read_full(fd, head, sizeof(head), deadline) < 0)
        return -1;
    *id = 0;
    for (int i = 0; i < 8; i++)
        *id |= (uint64_t)head[i] << (8 * i);
    *size = (size_t)head[8] | (size_t)head[9] << 8;
    return read_full(fd, buf, *size, deadline);
}

/* Whether r holds a whole HTTP response (closed: no more will come); its
 * status and its body, chunks decoded, copied into body. */
static bool http_body(const struct wd_buf *r, bool closed, int *status, struct wd_buf *body)
{
    const uint8_t *end = memmem(r->data, r->len, "\r\n\r\n", 4);
    const uint8_t *p;
    size_t have, clen = (size_t)-1;
    bool chunked = false;
    char *head;

    if (!end)
        return false;
    head = strndup((const char *)r->data, (size_t)(end - r->data));
    if (sscanf(head, "HTTP/%*d.%*d %d", status) != 1)
        *status = -1;
    for (char *line = strtok(head, "\r\n"); line; line = strtok(NULL, "\r\n")) {
        if (strncasecmp(line, "content-length:", 15) == 0)
            clen = strtoul(line + 15, NULL, 10);
        else if (strncasecmp(line, "transfer-encoding:", 18) == 0 && strcasestr(line, "chunked"))
            chunked = true;
    }
    free(head);
    p = end + 4;
    have = r->len - (size_t)(p - r->data);
    body->len = 0;
    body->data = realloc(body->data, have + 1);
    if (!chunked) {
        if (clen != (size_t)-1 ? have < clen : !closed)
            return false;
        body->len = clen != (size_t)-1 ? clen : have;
        memcpy(body->data, p, body->len);
        return true;
    }
    /* Chunks: hex size, CRLF, bytes, CRLF; the last one has size 0. */
    for (;;) {
        const uint8_t *eol = memmem(p, have, "\r\n", 2);
        size_t n;

        if (!eol)
            return false;
        n = strtoul((const char *)p, NULL, 16);
        have -= (size_t)(eol + 2 - p);
        p = eol + 2;
        if (n == 0)
            return true;
        if (have < n + 2)
            return false;
        memcpy(body->data + body->len, p, n);
        body->len += n;
        p += n + 2;
        have -= n + 2;
    }
}

/* Sends request as connection `id` and collects the whole response. */
static int wd_request(int fd, uint64_t id, const char *req, const char *body_in,
                      int *status, struct wd_buf *body, struct wd_buf *raw)
{
    static uint8_t frame[WD_FRAME_MAX];
    struct timespec now;
    size_t rlen = strlen(req), blen = body_in ? strlen(body_in) : 0;
    uint8_t *msg = malloc(rlen + blen);
    time_t deadline;
    int rc;

    memcpy(msg, req, rlen);
    memcpy(msg + rlen, body_in ? body_in : "", blen);
    rc = mux_send(fd, id, msg, rlen + blen);
    free(msg);
    if (rc < 0)
        return -1;
    clock_gettime(CLOCK_MONOTONIC, &now);
    deadline = now.tv_sec + WD_REPLY_WAIT_S;
    raw->len = 0;
    for (;;) {
        uint64_t got_id;
        size_t n;

        if (mux_recv(fd, &got_id, frame, &n, deadline) < 0)
            return -1;
        if (got_id != id)
            continue;       /* an earlier connection's closing frame */
        if (n > 0) {
            if (raw->len + n > WD_REPLY_MAX) {
                errno = EFBIG;
                return -1;
            }
            raw->data = realloc(raw->data, raw->len + n + 1);
            memcpy(raw->data + raw->len, frame, n);
            raw->len += n;
        }
        if (http_body(raw, n == 0, status, body))
            return 0;
        if (n == 0) {
            errno = ECONNRESET;
            return -1;
        }
    }
}

static void xml_unescape(char *s)
{
    static const struct { const char *ent; char c; } ents[] = {
        { "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' }, { "&quot;", '"' }, { "&apos;", '\'' },
    };
    char *out = s;

    while (*s) {
        bool done = false;

        for (size_t i = 0; i < sizeof(ents) / sizeof(ents[0]) && !done; i++) {
            size_t n = strlen(ents[i].ent);

            if (strncmp(s, ents[i].ent, n) == 0) {
                *out++ = ents[i].c;
                s += n;
                done = true;
            }
        }
        if (!done)
            *out++ = *s++;
    }
    *out = '\0';
}

static void url_decode(char *s)
{
    char *out = s;

    for (; *s; s++) {
        unsigned v;

        if (s[0] == '%' && s[1] && s[2] && sscanf(s + 1, "%2x", &v) == 1) {
            *out++ = (char)v;
            s += 2;
        } else {
            *out++ = *s;
        }
    }
    *out = '\0';
}

/* Every <...:href> of the multistatus answer, its path without the
 * leading '/' (at Depth: 1, an entry's name); the folder itself is left
 * out. */
static int list_hrefs(const struct wd_buf *body)
{
    char *xml = strndup((const char *)body->data, body->len);
    int count = 0;

    for (char *p = strchr(xml, '<'); p; p = strchr(p + 1, '<')) {
        char *name = p + 1, *name_end = name + strcspn(name, " \t\r\n/>");
        char *local = memrchr(name, ':', (size_t)(name_end - name));
        char *text, *text_end, *path;

        local = local ? local + 1 : name;
        if (*name == '/' || name_end - local != 4 || strncmp(local, "href", 4) != 0)
            continue;
        text = strchr(name_end, '>');
        if (!text || !(text_end = strchr(text + 1, '<')))
            break;
        *text_end = '\0';
        path = text + 1;
        xml_unescape(path);
        url_decode(path);
        if (strncmp(path, "http://", 7) == 0 || strncmp(path, "https://", 8) == 0) {
            path = strchr(strstr(path, "://") + 3, '/');
            if (!path)
                path = "/";
        }
        while (*path == '/')
            path++;
        if (*path) {
            kd_say("WEBDAV entry %s", path);
            count++;
        }
        *text_end = '<';
        p = text_end - 1;
    }
    free(xml);
    return count;
}

static int open_connected(const char *dev)
{
    for (;;) {
        int fd = open(dev, O_RDWR | O_CLOEXEC);
        struct pollfd pfd = { .fd = fd, .events = POLLOUT };

        if (fd >= 0) {
            if (poll(&pfd, 1, 200) == 1 && (pfd.revents & POLLOUT) &&
                !(pfd.revents & POLLHUP))
                return fd;
            close(fd);
        }
        usleep(100 * 1000);
    }
}

static void *webdav_main(void *arg)
{
    static const char propfind_body[] =
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>"
        "<D:propfind xmlns:D=\"DAV:\"><D:prop><D:resourcetype/></D:prop></D:propfind>";
    struct wd_buf raw = { 0 }, body = { 0 };
    char dev[300], req[512], hex[65];
    int fd, status;

    (void)arg;
    kd_load_modules(2);             /* virtio_console */
    if (!kd_vport_wait(WD_PORT, dev, sizeof(dev), WD_PORT_WAIT_S)) {
        kd_say("WEBDAV failed port=%s not found", WD_PORT);
        return NULL;
    }
    kd_say("WEBDAV waiting dev=%s", dev);
    fd = open_connected(dev);
    kd_say("WEBDAV connected");

    snprintf(req, sizeof(req),
             "PROPFIND / HTTP/1.1\r\nHost: localhost\r\nDepth: 1\r\nConnection: close\r\n"
             "Content-Type: application/xml; charset=utf-8\r\nContent-Length: %zu\r\n\r\n",
             strlen(propfind_body));
    if (wd_request(fd, 1, req, propfind_body, &status, &body, &raw) < 0) {
        kd_say("WEBDAV failed propfind errno=%d got=%zu", errno, raw.len);
        return NULL;
    }
    kd_say("WEBDAV propfind status=%d len=%zu", status, body.len);
    kd_say("WEBDAV listed n=%d", list_hrefs(&body));

    snprintf(req, sizeof(req), "GET /%s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
             get_name);
    if (wd_request(fd, 2, req, NULL, &status, &body, &raw) < 0) {
        kd_say("WEBDAV failed get errno=%d got=%zu", errno, raw.len);
        return NULL;
    }
    kd_sha256_hex(body.data, body.len, hex);
    kd_say("WEBDAV get status=%d len=%zu sha256=%s name=%s", status, body.len, hex, get_name);
    return NULL;
}

void kd_webdav_start(void)
{
    pthread_t t;

    if (!kd_cmdline_get("keydraw.webdav", get_name, sizeof(get_name)) || !get_name[0])
        return;
    if (pthread_create(&t, NULL, webdav_main, NULL) != 0)
        kd_say("WARN webdav thread errno=%d", errno);
    else
        pthread_detach(t);
}
