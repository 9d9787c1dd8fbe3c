/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the kernel says of a client's TCP socket, as the flow layer's QsLinkFacts, and its TCP_NOTSENT_LOWAT. */
#include "net/qs-tcp-facts.h"

#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/sockios.h>
#include <linux/tcp.h>

gboolean qs_tcp_facts_read(int fd, QsLinkFacts *facts)
{
    struct tcp_info ti;
    socklen_t len = sizeof(ti);
    int outq = 0, notsent = 0;

    memset(facts, 0, sizeof(*facts));
    memset(&ti, 0, sizeof(ti));
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0 ||
        len < offsetof(struct tcp_info, tcpi_min_rtt) + sizeof(ti.tcpi_min_rtt)) {
        return FALSE;
    }
    /* SIOCOUTQ: unacked + unsent bytes; SIOCOUTQNSD: unsent only. */
    if (ioctl(fd, SIOCOUTQ, &outq) < 0 || ioctl(fd, SIOCOUTQNSD, &notsent) < 0) {
        outq = (int)(ti.tcpi_notsent_bytes + ti.tcpi_unacked * ti.tcpi_snd_mss);
        notsent = (int)ti.tcpi_notsent_bytes;
    }
    facts->bytes_acked = ti.tcpi_bytes_acked;
    facts->bytes_written = ti.tcpi_bytes_acked + (guint64)MAX(outq, 0);
    facts->unsent_bytes = (guint32)MAX(notsent, 0);
    facts->in_flight_bytes = (guint32)MAX(outq - notsent, 0);
    facts->rtt_us = ti.tcpi_rtt;
    facts->min_rtt_us = ti.tcpi_min_rtt;
    if (len >= offsetof(struct tcp_info, tcpi_delivery_rate) + sizeof(ti.tcpi_delivery_rate)) {
        facts->delivery_rate = ti.tcpi_delivery_rate;
        facts->delivery_rate_app_limited = ti.tcpi_delivery_rate_app_limited;
    }
    return TRUE;
}

void qs_tcp_facts_set_notsent_lowat(int fd, guint32 bytes)
{
    int v = (int)MIN(bytes, (guint32)G_MAXINT);

    /* Not TCP (a Unix socket in tests): nothing to tune. */
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &v, sizeof(v));
}
