/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A client's TCP socket as the kernel reports it (qs_conn_get_link_facts()). */
#pragma once

#include <glib.h>
#include "util/qs-link-facts.h"

/* TCP_INFO, SIOCOUTQ and SIOCOUTQNSD of `fd`; FALSE (facts zeroed) when
 * `fd` is no TCP socket. */
gboolean qs_tcp_facts_read(int fd, QsLinkFacts *facts);
/* TCP_NOTSENT_LOWAT of `fd`, where it has one. */
void qs_tcp_facts_set_notsent_lowat(int fd, guint32 bytes);
