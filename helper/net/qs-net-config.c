/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Command-line options of the net layer and their validation. */

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <gio/gio.h>
#include "net/qs-link.h"
#include "net/qs-listen.h"
#include "net/qs-net-config.h"
#include "net/qs-ticket.h"
#include "net/qs-token-verifier.h"
#include "net/qs-web.h"

#define TICKET_SOURCE_MAX 4096

void qs_net_config_init(QsNetConfig *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->listen_fd = -1;
    cfg->tls_listen_fd = -1;
    cfg->ticket_fd = -1;
    cfg->view_ticket_fd = -1;
    cfg->token_keys_fd = -1;
    cfg->max_pending = 64;
    cfg->max_pending_per_source = 16;
    cfg->link_timeout_s = 10;
    cfg->link_timeout_ms = 10 * 1000;
    cfg->auth_fail_delay_ms = 1000;
    cfg->max_link_rate = 10;
    cfg->max_link_burst = 30;
}

void qs_net_config_clear(QsNetConfig *cfg)
{
    g_clear_pointer(&cfg->listen, g_free);
    g_clear_pointer(&cfg->tls_listen, g_free);
    g_clear_pointer(&cfg->tls_dir, g_free);
    g_clear_pointer(&cfg->ticket_file, g_free);
    g_clear_pointer(&cfg->ticket_expiry, g_free);
    g_clear_pointer(&cfg->secure_channels, g_free);
    g_clear_pointer(&cfg->ticket, qs_ticket_unref);
    g_clear_pointer(&cfg->view_ticket_file, g_free);
    g_clear_pointer(&cfg->view_ticket, qs_ticket_unref);
    g_clear_pointer(&cfg->token_keys_file, g_free);
    g_clear_pointer(&cfg->spice_html5_dir, g_free);
    g_clear_pointer(&cfg->web, qs_web_unref);
    if (cfg->token_keys) {
        explicit_bzero(cfg->token_keys, cfg->token_keys_len);
        g_clear_pointer(&cfg->token_keys, g_free);
    }
}

GOptionGroup *qs_net_option_group(QsNetConfig *cfg)
{
    const GOptionEntry entries[] = {
        { "listen", 0, 0, G_OPTION_ARG_STRING, &cfg->listen,
          "Listen for plain SPICE connections on ADDR:PORT", "ADDR:PORT" },
        { "tls-listen", 0, 0, G_OPTION_ARG_STRING, &cfg->tls_listen,
          "Listen for TLS SPICE connections on ADDR:PORT", "ADDR:PORT" },
        { "listen-fd", 0, 0, G_OPTION_ARG_INT, &cfg->listen_fd,
          "Accept plain connections on the inherited listening socket FD",
          "FD" },
        { "tls-listen-fd", 0, 0, G_OPTION_ARG_INT, &cfg->tls_listen_fd,
          "Accept TLS connections on the inherited listening socket FD",
          "FD" },
        { "tls-dir", 0, 0, G_OPTION_ARG_FILENAME, &cfg->tls_dir,
          "x509 directory: server-cert.pem, server-key.pem (ca-cert.pem "
          "optional); SIGHUP reloads it, except once the fs confinement "
          "step has hidden the files", "DIR" },
        { "ticket-file", 0, 0, G_OPTION_ARG_FILENAME, &cfg->ticket_file,
          "Read the ticket (password, at most 60 bytes) from the first line "
          "of PATH; a second line 'expiry=@UNIX_SECONDS' may set its expiry",
          "PATH" },
        { "ticket-fd", 0, 0, G_OPTION_ARG_INT, &cfg->ticket_fd,
          "Read the ticket (same format) from FD until EOF, then close it",
          "FD" },
        { "view-ticket-file", 0, 0, G_OPTION_ARG_FILENAME, &cfg->view_ticket_file,
          "A second ticket (same format, another password) for view-only "
          "clients: they see and hear the guest, their input, clipboard, "
          "resize and microphone do not reach it", "PATH" },
        { "view-ticket-fd", 0, 0, G_OPTION_ARG_INT, &cfg->view_ticket_fd,
          "The view-only ticket from FD until EOF, then close it", "FD" },
        { "token-keys-file", 0, 0, G_OPTION_ARG_FILENAME, &cfg->token_keys_file,
          "Accept signed console tokens made with this VM's keys from PATH "
          "([tokens] vm=UUID, key-ID=HEX; see qemu-spice(1)), beside or "
          "instead of a ticket", "PATH" },
        { "token-keys-fd", 0, 0, G_OPTION_ARG_INT, &cfg->token_keys_fd,
          "The token keys from FD until EOF, then close it", "FD" },
        { "ticket-expiry", 0, 0, G_OPTION_ARG_STRING, &cfg->ticket_expiry,
          "Ticket expiry: never, SECONDS or +SECONDS from start, or "
          "@UNIX_SECONDS; checked at every channel link", "WHEN" },
        { "disable-ticketing", 0, 0, G_OPTION_ARG_NONE,
          &cfg->disable_ticketing,
          "Accept any ticket (no authentication)", NULL },
        { "insecure", 0, 0, G_OPTION_ARG_NONE, &cfg->insecure,
          "Allow --disable-ticketing on a non-loopback listener (a "
          "proxy-only network); logged at start", NULL },
        { "secure-channels", 0, 0, G_OPTION_ARG_STRING, &cfg->secure_channels,
          "Channels only served over TLS: all, or a comma list of main, "
          "display, inputs, cursor, playback, record, usbredir, ...; on the "
          "plain port they are answered NEED_SECURED", "LIST" },
        { "max-unauthenticated", 0, 0, G_OPTION_ARG_INT, &cfg->max_pending,
          "Connections still linking, at most (default 64; the oldest is "
          "dropped for a new one)", "N" },
        { "max-unauthenticated-per-source", 0, 0, G_OPTION_ARG_INT,
          &cfg->max_pending_per_source,
          "Connections still linking from one address, at most (default 16)",
          "N" },
        { "link-timeout", 0, 0, G_OPTION_ARG_INT, &cfg->link_timeout_s,
          "Seconds from accept to an authenticated link, TLS handshake "
          "included (default 10)", "SECONDS" },
        { "max-link-rate", 0, 0, G_OPTION_ARG_INT, &cfg->max_link_rate,
          "Link attempts per second from one address (an IPv6 /64) that "
          "get an RSA key or a TLS handshake, beyond the burst; more are "
          "refused; a link that completes does not count; 0 = no limit "
          "(default 10)", "N" },
        { "max-link-burst", 0, 0, G_OPTION_ARG_INT, &cfg->max_link_burst,
          "Link attempts from one address at once before --max-link-rate "
          "applies (default 30)", "N" },
        { "no-console-page", 0, 0, G_OPTION_ARG_NONE, &cfg->no_console_page,
          "Serve no console page: a browser's GET on a console port gets a 400 "
          "unless it is a WebSocket upgrade (default: http(s)://HOST:PORT/#TOKEN "
          "opens the console in spice-html5)", NULL },
        { "spice-html5-dir", 0, 0, G_OPTION_ARG_FILENAME, &cfg->spice_html5_dir,
          "spice-html5's files for the console page, read once at start (default "
          QS_WEB_HTML5_DIR ", Debian's package spice-html5; missing there, the page "
          "says so)", "DIR" },
        G_OPTION_ENTRY_NULL
    };
    GOptionGroup *group = g_option_group_new(
        "net",
        "Network options: listeners, TLS and tickets. Authentication is the "
        "SPICE ticket (RSA-OAEP); SASL is not supported and a client asking "
        "for it is refused.",
        "Show network options", cfg, NULL);

    g_option_group_add_entries(group, entries);
    return group;
}

/* The contents of a ticket file, or of a ticket descriptor read to its end
 * and closed (*fd becomes -1). */
static char *read_ticket_source(const char *file, gint *fd, gsize *len, GError **error)
{
    char *text = NULL;

    if (file) {
        if (!g_file_get_contents(file, &text, len, error)) {
            return NULL;
        }
        if (*len > TICKET_SOURCE_MAX) {
            explicit_bzero(text, *len);
            g_free(text);
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%s: too large for a ticket or key file", file);
            return NULL;
        }
        return text;
    }
    text = g_malloc0(TICKET_SOURCE_MAX + 1);
    *len = 0;
    for (;;) {
        ssize_t n = read((*fd), text + *len,
                         TICKET_SOURCE_MAX + 1 - *len);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                        "reading fd %d: %s", (*fd),
                        g_strerror(errno));
            break;
        }
        if (n == 0) {
            close((*fd));
            (*fd) = -1;
            return text;
        }
        *len += (gsize)n;
        if (*len > TICKET_SOURCE_MAX) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "fd %d: too large for a ticket or key file", (*fd));
            break;
        }
    }
    explicit_bzero(text, TICKET_SOURCE_MAX + 1);
    g_free(text);
    return NULL;
}

static gboolean parse_secure_channels(QsNetConfig *cfg, GError **error)
{
    g_auto(GStrv) names = NULL;

    cfg->secure_mask = 0;
    if (!cfg->secure_channels) {
        return TRUE;
    }
    if (strcmp(cfg->secure_channels, "all") == 0) {
        cfg->secure_mask = ~(guint32)0;
        return TRUE;
    }
    names = g_strsplit(cfg->secure_channels, ",", -1);
    for (guint i = 0; names[i]; i++) {
        int type = qs_channel_type_from_string(g_strstrip(names[i]));

        if (type < 0) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--secure-channels: unknown channel '%s'", names[i]);
            return FALSE;
        }
        cfg->secure_mask |= 1u << type;
    }
    return TRUE;
}

static QsTicket *load_ticket(const char *file, gint *fd, gint64 expiry, GError **error)
{
    gsize len = 0;
    char *text = read_ticket_source(file, fd, &len, error);
    QsTicket *ticket;

    if (!text) {
        return NULL;
    }
    ticket = qs_ticket_parse(text, len, expiry, error);
    explicit_bzero(text, len);
    g_free(text);
    return ticket;
}

#define USAGE(...) \
    (g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, __VA_ARGS__), \
     FALSE)

static gboolean listeners_loopback(const QsNetConfig *cfg, gboolean plain, gboolean tls)
{
    return (!plain || (cfg->listen ? qs_listen_spec_is_loopback(cfg->listen)
                                   : qs_listen_fd_is_loopback(cfg->listen_fd))) &&
           (!tls || (cfg->tls_listen ? qs_listen_spec_is_loopback(cfg->tls_listen)
                                     : qs_listen_fd_is_loopback(cfg->tls_listen_fd)));
}

static gboolean load_token_keys(QsNetConfig *cfg, GError **error)
{
    g_autoptr(QsTokenVerifier) check = NULL;

    if (!cfg->token_keys_file && cfg->token_keys_fd < 0) {
        return TRUE;
    }
    if (cfg->token_keys) {
        explicit_bzero(cfg->token_keys, cfg->token_keys_len);
        g_clear_pointer(&cfg->token_keys, g_free);
    }
    cfg->token_keys = read_ticket_source(cfg->token_keys_file, &cfg->token_keys_fd,
                                         &cfg->token_keys_len, error);
    if (!cfg->token_keys) {
        return FALSE;
    }
    /* Parsed here for the usage error; the server parses its own copy. */
    check = qs_token_verifier_new(cfg->token_keys, cfg->token_keys_len, error);
    return check != NULL;
}

static gboolean load_view_ticket(QsNetConfig *cfg, gint64 expiry, GError **error)
{
    if (cfg->view_ticket_file && cfg->view_ticket_fd >= 0) {
        return USAGE("--view-ticket-file and --view-ticket-fd exclude each other");
    }
    g_clear_pointer(&cfg->view_ticket, qs_ticket_unref);
    if ((cfg->view_ticket_file || cfg->view_ticket_fd >= 0) &&
        !(cfg->view_ticket = load_ticket(cfg->view_ticket_file, &cfg->view_ticket_fd,
                                         expiry, error))) {
        return FALSE;
    }
    /* The control password would always win: the view one would be dead. */
    if (cfg->view_ticket && cfg->ticket &&
        qs_ticket_same_password(cfg->ticket, cfg->view_ticket)) {
        return USAGE("the view-only ticket has the same password as the ticket");
    }
    return TRUE;
}

/* Read now, before the helper confines itself: the files are never
 * opened again. */
static gboolean load_console_page(QsNetConfig *cfg, GError **error)
{
    g_clear_pointer(&cfg->web, qs_web_unref);
    if (cfg->no_console_page) {
        if (cfg->spice_html5_dir) {
            return USAGE("--spice-html5-dir and --no-console-page exclude each other");
        }
        return TRUE;
    }
    cfg->web = qs_web_new(cfg->spice_html5_dir ? cfg->spice_html5_dir : QS_WEB_HTML5_DIR,
                          cfg->spice_html5_dir != NULL, error);
    if (!cfg->web) {
        g_prefix_error(error, "--spice-html5-dir: ");
    }
    return cfg->web != NULL;
}

gboolean qs_net_config_validate(QsNetConfig *cfg, GError **error)
{
    gboolean plain = cfg->listen || cfg->listen_fd >= 0;
    gboolean tls = cfg->tls_listen || cfg->tls_listen_fd >= 0;
    gint64 expiry = 0;

    if (cfg->listen && cfg->listen_fd >= 0) {
        return USAGE("--listen and --listen-fd exclude each other");
    }
    if (cfg->tls_listen && cfg->tls_listen_fd >= 0) {
        return USAGE("--tls-listen and --tls-listen-fd exclude each other");
    }
    if (!plain && !tls) {
        return USAGE("no listener: give --listen, --tls-listen, --listen-fd "
                     "or --tls-listen-fd");
    }
    {
        const char *specs[] = { cfg->listen, cfg->tls_listen };

        for (guint i = 0; i < G_N_ELEMENTS(specs); i++) {
            g_autofree char *host = NULL;
            g_autofree char *port = NULL;

            if (specs[i] &&
                !qs_listen_parse_address(specs[i], &host, &port, error)) {
                return FALSE;
            }
        }
    }
    if (tls && !cfg->tls_dir) {
        return USAGE("a TLS listener needs --tls-dir");
    }
    if (!tls && cfg->tls_dir) {
        return USAGE("--tls-dir without a TLS listener");
    }
    if (cfg->max_pending < 1 || cfg->max_pending_per_source < 1) {
        return USAGE("the unauthenticated-connection limits must be >= 1");
    }
    if (cfg->max_link_rate < 0 || cfg->max_link_rate > 100000 ||
        cfg->max_link_burst < 1 || cfg->max_link_burst > 100000) {
        return USAGE("--max-link-rate must be 0 to 100000 and "
                     "--max-link-burst 1 to 100000");
    }
    if (cfg->link_timeout_s < 1 || cfg->link_timeout_s > 3600) {
        return USAGE("--link-timeout must be 1 to 3600 seconds");
    }
    cfg->link_timeout_ms = cfg->link_timeout_s * 1000;
    if (!parse_secure_channels(cfg, error) || !load_console_page(cfg, error)) {
        return FALSE;
    }
    if (cfg->secure_mask && !tls) {
        return USAGE("--secure-channels needs a TLS listener");
    }
    if (cfg->ticket_file && cfg->ticket_fd >= 0) {
        return USAGE("--ticket-file and --ticket-fd exclude each other");
    }
    if (cfg->token_keys_file && cfg->token_keys_fd >= 0) {
        return USAGE("--token-keys-file and --token-keys-fd exclude each other");
    }
    if (cfg->disable_ticketing) {
        if (cfg->ticket_file || cfg->ticket_fd >= 0 || cfg->ticket_expiry ||
            cfg->view_ticket_file || cfg->view_ticket_fd >= 0 ||
            cfg->token_keys_file || cfg->token_keys_fd >= 0) {
            return USAGE("--disable-ticketing excludes the ticket and token options");
        }
        if (!cfg->insecure && !(listeners_loopback(cfg, plain, tls))) {
            return USAGE("refusing to serve without a credential on a non-loopback "
                         "listener (add --insecure for a proxy-only network)");
        }
        return TRUE;
    }
    if (cfg->insecure) {
        return USAGE("--insecure only goes with --disable-ticketing");
    }
    if (!load_token_keys(cfg, error)) {
        return FALSE;
    }
    if (!cfg->ticket_file && cfg->ticket_fd < 0) {
        if (cfg->token_keys) {
            if (cfg->ticket_expiry) {
                return USAGE("--ticket-expiry without a ticket");
            }
            return load_view_ticket(cfg, 0, error);
        }
        return USAGE("a credential is required: --ticket-file, --ticket-fd, "
                     "--token-keys-file or --token-keys-fd (or --disable-ticketing)");
    }
    if (cfg->ticket_expiry &&
        !qs_ticket_parse_expiry(cfg->ticket_expiry, g_get_real_time(),
                                &expiry, error)) {
        return FALSE;
    }
    g_clear_pointer(&cfg->ticket, qs_ticket_unref);
    if (!(cfg->ticket = load_ticket(cfg->ticket_file, &cfg->ticket_fd, expiry, error))) {
        return FALSE;
    }
    return load_view_ticket(cfg, expiry, error);
}
