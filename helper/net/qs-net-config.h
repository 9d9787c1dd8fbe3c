/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The net layer's command-line options: listeners, TLS, tickets, limits. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct QsTicket QsTicket;
typedef struct QsWeb QsWeb;

typedef struct {
    /* Parsed from the command line (see qs_net_option_group()). */
    char *listen;            /* "ADDR:PORT" plain listener */
    char *tls_listen;        /* "ADDR:PORT" TLS listener */
    gint listen_fd;          /* inherited listening socket, -1 if none */
    gint tls_listen_fd;
    char *tls_dir;           /* ca-cert.pem, server-cert.pem, server-key.pem */
    char *ticket_file;
    gint ticket_fd;
    char *ticket_expiry;     /* "never", "+SECONDS" / "SECONDS" from start, "@UNIX" */
    char *view_ticket_file;  /* a second password: view-only clients */
    gint view_ticket_fd;
    char *token_keys_file;   /* signed console tokens: this VM's keys */
    gint token_keys_fd;
    gboolean disable_ticketing;
    gboolean insecure;       /* allow non-loopback listening without a credential */
    char *secure_channels;   /* "all" or "main,display,..." */
    gint max_pending;        /* unauthenticated connections, global */
    gint max_pending_per_source;
    gint link_timeout_s;     /* --link-timeout */
    gint link_timeout_ms;    /* accept → authenticated, TLS handshake
                              * included; set from link_timeout_s */
    gint auth_fail_delay_ms; /* pause before answering a wrong ticket */
    gint max_link_rate;      /* keyed link attempts per second per source,
                              * 0 = no limit */
    gint max_link_burst;     /* ... up to this many at once */
    gboolean no_console_page; /* GET requests get no page, only upgrades */
    char *spice_html5_dir;   /* spice-html5's files; NULL: the default */
    /* Not an option: the link rate's clock, monotonic microseconds; NULL
     * is g_get_monotonic_time. Unit tests pass a fake one, so the rate's
     * refill does not depend on how fast the machine runs them. */
    gint64 (*link_rate_clock)(void);

    /* Filled by qs_net_config_validate(). */
    QsTicket *ticket;        /* NULL: no fixed ticket (tokens only, or
                              * ticketing disabled) */
    QsTicket *view_ticket;   /* or NULL */
    char *token_keys;        /* the key file's text (checked), or NULL */
    gsize token_keys_len;
    guint32 secure_mask;     /* bit n set: channel type n needs TLS */
    QsWeb *web;              /* the console page, or NULL */
} QsNetConfig;

/* Sets the defaults; call before parsing. */
void qs_net_config_init(QsNetConfig *cfg);
void qs_net_config_clear(QsNetConfig *cfg);

/* A "Network" option group whose entries write into `cfg` (which must
 * outlive the parse). */
GOptionGroup *qs_net_option_group(QsNetConfig *cfg);

/* Checks the combination of options after parsing and loads the tickets,
 * the token keys and the console page's files (reading their files /
 * descriptors). Errors are usage errors. */
gboolean qs_net_config_validate(QsNetConfig *cfg, GError **error);

G_END_DECLS
