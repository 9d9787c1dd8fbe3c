/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The delay relay's connection table: per-direction delay queues with a
 * byte bound, optional per-connection pacing, and the counters it reports. */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "qs-relay.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Largest single read: keeps chunks (and the delay granularity) small. */
#define QS_RELAY_READ_MAX (64 * 1024)

void qs_relay_init(QsRelay *r)
{
    memset(r, 0, sizeof(*r));
    r->queue_limit = 4L << 20;
    r->max_conns = QS_RELAY_MAX_CONNS;
}

static void dir_init(QsDir *d, int from, int to, const QsRelay *r, int64_t now)
{
    memset(d, 0, sizeof(*d));
    d->from = from;
    d->to = to;
    d->tokens = (double)r->burst_bytes;
    d->tok_us = now;
}

void qs_relay_add_conn(QsRelay *r, int cfd, int sfd, int64_t now)
{
    QsConn *c = r->n_records < QS_RELAY_MAX_RECORDS ? calloc(1, sizeof(*c)) : NULL;
    if (!c) {
        fprintf(stderr, "qs-delay-relay: connection record limit reached\n");
        close(cfd);
        close(sfd);
        r->refused++;
        return;
    }
    c->id = r->n_records + 1;
    c->cfd = cfd;
    c->sfd = sfd;
    c->open = true;
    c->opened_us = now;
    c->channel_type = c->channel_id = -1;
    c->pfd_c = c->pfd_s = -1;
    dir_init(&c->c2s, cfd, sfd, r, now);
    dir_init(&c->s2c, sfd, cfd, r, now);
    r->conns[r->n_records++] = c;
    r->n_conns++;
}

static void dir_free(QsDir *d)
{
    while (d->head) {
        QsChunk *next = d->head->next;
        free(d->head);
        d->head = next;
    }
    d->tail = NULL;
    d->queued = 0;
}

static void snapshot_tcp(QsConn *c)
{
    socklen_t len = sizeof(c->ti);
    if (getsockopt(c->cfd, IPPROTO_TCP, TCP_INFO, &c->ti, &len) == 0)
        c->have_ti = true;
}

static void conn_close(QsRelay *r, QsConn *c, int64_t now)
{
    if (!c->open)
        return;
    snapshot_tcp(c);
    close(c->cfd);
    close(c->sfd);
    dir_free(&c->c2s);
    dir_free(&c->s2c);
    c->open = false;
    c->closed_us = now;
    r->n_conns--;
}

static void refill(const QsRelay *r, QsDir *d, int64_t now)
{
    if (r->rate_kbit <= 0)
        return;
    /* kbit/s is bits per ms, so bytes per us = kbit / 8000. */
    d->tokens += (double)(now - d->tok_us) * (double)r->rate_kbit / 8000.0;
    if (d->tokens > (double)r->burst_bytes)
        d->tokens = (double)r->burst_bytes;
    d->tok_us = now;
}

/* What one direction wants from poll; returns microseconds until it can
 * make progress without an fd event (-1: no deadline). */
static int64_t dir_setup(QsRelay *r, QsDir *d, int64_t now)
{
    int64_t wait = -1;
    d->want_from = d->want_to = 0;
    if (!d->eof && d->queued < (size_t)r->queue_limit)
        d->want_from = POLLIN;
    if (d->eof && !d->head && !d->shut) {
        shutdown(d->to, SHUT_WR);
        d->shut = true;
    }
    if (!d->head)
        return wait;
    if (d->head->due_us > now)
        return d->head->due_us - now;
    refill(r, d, now);
    if (r->rate_kbit > 0) {
        size_t left = d->head->len - d->head->off;
        double need = (double)(left < 1448 ? left : 1448);
        if (d->tokens < need)
            return (int64_t)((need - d->tokens) * 8000.0 / (double)r->rate_kbit) + 1;
    }
    d->want_to = POLLOUT;
    return wait;
}

int qs_relay_poll_setup(QsRelay *r, struct pollfd *pfds, int *nfds, int64_t now)
{
    int64_t best = -1;
    int n = 0;
    for (int i = 0; i < r->n_records; i++) {
        QsConn *c = r->conns[i];
        c->pfd_c = c->pfd_s = -1;
        if (!c->open)
            continue;
        int64_t w1 = dir_setup(r, &c->c2s, now);
        int64_t w2 = dir_setup(r, &c->s2c, now);
        if (c->c2s.shut && c->s2c.shut) {
            conn_close(r, c, now);
            continue;
        }
        if (w1 >= 0 && (best < 0 || w1 < best))
            best = w1;
        if (w2 >= 0 && (best < 0 || w2 < best))
            best = w2;
        /* A socket we want nothing from is left out (negative fd): poll
         * would otherwise report its hang-up over and over while the other
         * direction drains. */
        short ev_c = (short)(c->c2s.want_from | c->s2c.want_to);
        short ev_s = (short)(c->s2c.want_from | c->c2s.want_to);
        c->pfd_c = n;
        pfds[n++] = (struct pollfd){ .fd = ev_c ? c->cfd : -1, .events = ev_c };
        c->pfd_s = n;
        pfds[n++] = (struct pollfd){ .fd = ev_s ? c->sfd : -1, .events = ev_s };
    }
    *nfds = n;
    if (best < 0)
        return -1;
    return (int)((best + 999) / 1000);
}

void qs_relay_free(QsRelay *r)
{
    for (int i = 0; i < r->n_records; i++) {
        if (r->conns[i]->open)
            conn_close(r, r->conns[i], 0);
        free(r->conns[i]);
    }
    r->n_records = 0;
}

static void note_link(QsConn *c, const unsigned char *buf, size_t n)
{
    size_t take = sizeof(c->link_head) - c->link_len;
    if (take == 0)
        return;
    if (take > n)
        take = n;
    memcpy(c->link_head + c->link_len, buf, take);
    c->link_len += take;
    /* SpiceLinkHeader (magic "REDQ", major, minor, size: 16 bytes), then
     * SpiceLinkMess: connection_id (4), channel_type (1), channel_id (1). */
    if (c->link_len == sizeof(c->link_head) && !memcmp(c->link_head, "REDQ", 4)) {
        c->channel_type = c->link_head[20];
        c->channel_id = c->link_head[21];
    }
}

/* Returns false when the connection has failed. */
static bool dir_read(QsRelay *r, QsConn *c, QsDir *d, int64_t now)
{
    size_t room = (size_t)r->queue_limit - d->queued;
    if (room > QS_RELAY_READ_MAX)
        room = QS_RELAY_READ_MAX;
    QsChunk *ch = malloc(sizeof(*ch) + room);
    if (!ch)
        return false;
    ssize_t n = read(d->from, ch->data, room);
    if (n <= 0) {
        free(ch);
        if (n == 0) {
            d->eof = true;
            return true;
        }
        return errno == EAGAIN || errno == EINTR;
    }
    QsChunk *fit = realloc(ch, sizeof(*ch) + (size_t)n);
    ch = fit ? fit : ch;
    ch->next = NULL;
    ch->len = (size_t)n;
    ch->off = 0;
    ch->due_us = now + r->delay_us;
    if (d->tail)
        d->tail->next = ch;
    else
        d->head = ch;
    d->tail = ch;
    d->queued += (size_t)n;
    if (d->queued > d->max_queued)
        d->max_queued = d->queued;
    d->bytes_in += (uint64_t)n;
    d->reads++;
    if (d == &c->c2s)
        note_link(c, ch->data, ch->len);
    return true;
}

static bool dir_write(QsRelay *r, QsDir *d, int64_t now)
{
    refill(r, d, now);
    while (d->head && d->head->due_us <= now) {
        QsChunk *h = d->head;
        size_t len = h->len - h->off;
        if (r->rate_kbit > 0) {
            if (d->tokens < 1.0)
                break;
            if ((double)len > d->tokens)
                len = (size_t)d->tokens;
        }
        ssize_t n = write(d->to, h->data + h->off, len);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR;
        d->writes++;
        d->bytes_out += (uint64_t)n;
        d->queued -= (size_t)n;
        if (r->rate_kbit > 0)
            d->tokens -= (double)n;
        h->off += (size_t)n;
        if (h->off < h->len)
            break;
        d->head = h->next;
        if (!d->head)
            d->tail = NULL;
        free(h);
    }
    return true;
}

void qs_relay_service(QsRelay *r, const struct pollfd *pfds, int64_t now)
{
    for (int i = 0; i < r->n_records; i++) {
        QsConn *c = r->conns[i];
        if (!c->open || c->pfd_c < 0)
            continue;
        short rc = pfds[c->pfd_c].revents, rs = pfds[c->pfd_s].revents;
        bool ok = true;
        if (rc & POLLNVAL || rs & POLLNVAL)
            ok = false;
        if (ok && (rc & (POLLIN | POLLHUP | POLLERR)) && c->c2s.want_from)
            ok = dir_read(r, c, &c->c2s, now);
        if (ok && (rs & (POLLIN | POLLHUP | POLLERR)) && c->s2c.want_from)
            ok = dir_read(r, c, &c->s2c, now);
        if (ok && (rc & (POLLOUT | POLLERR)) && c->s2c.want_to)
            ok = dir_write(r, &c->s2c, now);
        if (ok && (rs & (POLLOUT | POLLERR)) && c->c2s.want_to)
            ok = dir_write(r, &c->c2s, now);
        if (!ok)
            conn_close(r, c, now);
    }
}

static void print_dir(FILE *out, const char *name, const QsDir *d)
{
    fprintf(out, "\"%s\":{\"bytes_in\":%" PRIu64 ",\"reads\":%" PRIu64
            ",\"bytes_out\":%" PRIu64 ",\"writes\":%" PRIu64
            ",\"queued\":%zu,\"max_queued\":%zu}",
            name, d->bytes_in, d->reads, d->bytes_out, d->writes,
            d->queued, d->max_queued);
}

void qs_relay_print_stats(QsRelay *r, FILE *out, int64_t now)
{
    fprintf(out, "{\"t_us\":%" PRId64 ",\"refused\":%" PRIu64 ",\"conns\":[",
            now, r->refused);
    for (int i = 0; i < r->n_records; i++) {
        QsConn *c = r->conns[i];
        if (c->open)
            snapshot_tcp(c);
        fprintf(out, "%s{\"id\":%d,\"channel\":%d,\"channel_id\":%d,\"open\":%s,"
                "\"opened_us\":%" PRId64 ",\"closed_us\":%" PRId64 ",",
                i ? "," : "", c->id, c->channel_type, c->channel_id,
                c->open ? "true" : "false", c->opened_us, c->closed_us);
        print_dir(out, "s2c", &c->s2c);
        fputc(',', out);
        print_dir(out, "c2s", &c->c2s);
        if (c->have_ti) {
            const struct tcp_info *t = &c->ti;
            fprintf(out, ",\"tcp\":{\"segs_out\":%u,\"data_segs_out\":%u,"
                    "\"bytes_sent\":%llu,\"bytes_acked\":%llu,"
                    "\"total_retrans\":%u,\"rtt_us\":%u,\"snd_cwnd\":%u,"
                    "\"busy_us\":%llu,\"rwnd_limited_us\":%llu,"
                    "\"sndbuf_limited_us\":%llu}",
                    t->tcpi_segs_out, t->tcpi_data_segs_out,
                    (unsigned long long)t->tcpi_bytes_sent,
                    (unsigned long long)t->tcpi_bytes_acked,
                    t->tcpi_total_retrans, t->tcpi_rtt, t->tcpi_snd_cwnd,
                    (unsigned long long)t->tcpi_busy_time,
                    (unsigned long long)t->tcpi_rwnd_limited,
                    (unsigned long long)t->tcpi_sndbuf_limited);
        }
        fputc('}', out);
    }
    fputs("]}\n", out);
    fflush(out);
}
