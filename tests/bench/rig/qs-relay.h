/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The delay relay's connection table: queues, pacing and counters. */
#pragma once

#include <netinet/in.h>
/* linux/tcp.h, not netinet/tcp.h: glibc's struct tcp_info lacks the
 * counters (segs_out, bytes_sent, *_limited) the report needs. */
#include <linux/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Open connections at once (each takes two pollfds) and connections
 * remembered for the counters over the relay's life. */
#define QS_RELAY_MAX_CONNS 64
#define QS_RELAY_MAX_RECORDS 1024

typedef struct QsChunk {
    struct QsChunk *next;
    int64_t due_us;
    size_t len, off;
    unsigned char data[];
} QsChunk;

/* One direction of a relayed connection. */
typedef struct {
    int from, to;
    QsChunk *head, *tail;
    size_t queued, max_queued;
    uint64_t bytes_in, reads, bytes_out, writes;
    bool eof, shut;
    double tokens;
    int64_t tok_us;
    int want_from, want_to;     /* poll events wanted on from / to */
} QsDir;

typedef struct {
    int id;
    int cfd, sfd;               /* client-facing and server-facing sockets */
    bool open;
    int64_t opened_us, closed_us;
    QsDir c2s, s2c;
    unsigned char link_head[22];
    size_t link_len;
    int channel_type, channel_id;
    struct tcp_info ti;         /* last TCP_INFO of cfd */
    bool have_ti;
    int pfd_c, pfd_s;           /* indexes into the poll array, -1 if none */
} QsConn;

typedef struct {
    int64_t delay_us;
    long rate_kbit, burst_bytes, queue_limit;
    int max_conns;
    QsConn *conns[QS_RELAY_MAX_RECORDS];
    int n_records, n_conns;
    uint64_t refused;
} QsRelay;

void qs_relay_init(QsRelay *r);
void qs_relay_add_conn(QsRelay *r, int cfd, int sfd, int64_t now);
int qs_relay_poll_setup(QsRelay *r, struct pollfd *pfds, int *nfds, int64_t now);
void qs_relay_service(QsRelay *r, const struct pollfd *pfds, int64_t now);
void qs_relay_free(QsRelay *r);
void qs_relay_print_stats(QsRelay *r, FILE *out, int64_t now);
