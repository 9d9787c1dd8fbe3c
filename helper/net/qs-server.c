/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The server object and its listening sockets: accepts connections and
 * passes them to the link stage (qs-link-stage.c). */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <gio/gio.h>
#include <glib-unix.h>
#include "net/qs-listen.h"
#include "net/qs-server-private.h"

#define KEY_SPARES 2
#define NOTSENT_LOWAT (128 * 1024)
#define ACCEPT_BURST 32
/* Sources whose link rate is tracked at once (see qs-rate-limit.c). */
#define RATE_SOURCES 4096

struct QsListener {
    QsServer *server;
    int fd;
    gboolean tls;
    GSource *source;
    GSource *retry;
};

/* The source the per-source limits count: the address, or for IPv6 its
 * /64, which one host usually holds whole (so it cannot dodge the limits
 * by changing addresses). */
static void source_of(const struct sockaddr_storage *sa, const char *host,
                      char *out, gsize size)
{
    const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;
    char buf[INET6_ADDRSTRLEN];
    struct in6_addr prefix;

    if (sa->ss_family != AF_INET6 || IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
        g_strlcpy(out, host, size);
        return;
    }
    prefix = sin6->sin6_addr;
    memset(prefix.s6_addr + 8, 0, 8);
    if (!inet_ntop(AF_INET6, &prefix, buf, sizeof(buf))) {
        g_strlcpy(out, host, size);
        return;
    }
    g_snprintf(out, size, "%s/64", buf);
}

/* The peer's "ADDRESS:PORT" and the source the per-source limits count. */
static void name_peer(const struct sockaddr_storage *sa, socklen_t salen, char **peer,
                      char *source, gsize source_size)
{
    char host[NI_MAXHOST] = "?";
    char serv[NI_MAXSERV] = "?";

    getnameinfo((const struct sockaddr *)sa, salen, host, sizeof(host), serv,
                sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV);
    *peer = sa->ss_family == AF_INET6 ? g_strdup_printf("[%s]:%s", host, serv)
                                      : g_strdup_printf("%s:%s", host, serv);
    source_of(sa, host, source, source_size);
}

/* A client's connection, accepted or handed in, into the link stage. */
static void start_link(QsServer *s, int fd, sa_family_t family, gboolean tls,
                       const char *peer, const char *source, gboolean skip_auth)
{
    g_autoptr(GError) error = NULL;
    QsStream *stream;

    if (family == AF_INET || family == AF_INET6) {
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
        /* POLLOUT only when little is unsent, so our queue, not the
         * kernel's, holds the backlog the flow layer sees. */
        setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT,
                   &(int){NOTSENT_LOWAT}, sizeof(int));
    }
    stream = qs_stream_new(fd, tls ? s->creds : NULL, peer, &error);
    if (!stream) {
        g_warning("connection from %s: %s", peer, error->message);
        return;
    }
    qs_stream_set_web(stream, s->web != NULL);
    qs_link_stage_start(s, stream, source, skip_auth);
}

static void accept_one(QsServer *s, QsListener *l, int fd,
                       const struct sockaddr_storage *sa, socklen_t salen)
{
    char source[NI_MAXHOST + 4];
    g_autofree char *peer = NULL;

    name_peer(sa, salen, &peer, source, sizeof(source));
    start_link(s, fd, sa->ss_family, l->tls, peer, source, FALSE);
}

static gboolean listener_cb(gint fd, GIOCondition cond, gpointer data);

static gboolean listener_retry(gpointer data)
{
    QsListener *l = data;

    if (l->retry) {
        g_source_unref(g_steal_pointer(&l->retry));
    }
    l->source = g_unix_fd_source_new(l->fd, G_IO_IN);
    g_source_set_callback(l->source, G_SOURCE_FUNC(listener_cb), l, NULL);
    g_source_attach(l->source, g_main_context_get_thread_default());
    return G_SOURCE_REMOVE;
}

static gboolean listener_cb(gint fd, GIOCondition cond, gpointer data)
{
    QsListener *l = data;

    (void)cond;
    for (int i = 0; i < ACCEPT_BURST; i++) {
        struct sockaddr_storage sa;
        socklen_t salen = sizeof(sa);
        int c = accept4(fd, (struct sockaddr *)&sa, &salen,
                        SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (c >= 0) {
            accept_one(l->server, l, c, &sa, salen);
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED) {
            continue;
        }
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
            errno == ENOMEM) {
            /* Out of descriptors: pause instead of spinning on poll(). */
            g_warning("accept: %s; pausing the listener", g_strerror(errno));
            g_source_destroy(l->source);
            g_source_unref(l->source);
            l->source = NULL;
            l->retry = qs_net_timeout_source(200, listener_retry, l, NULL);
            return G_SOURCE_REMOVE;
        }
        break;
    }
    return G_SOURCE_CONTINUE;
}

static void listener_free(QsListener *l)
{
    if (!l) {
        return;
    }
    if (l->source) {
        g_source_destroy(l->source);
        g_source_unref(l->source);
    }
    qs_net_source_cancel(&l->retry);
    close(l->fd);
    g_free(l);
}

static QsListener *listener_new(QsServer *s, const char *addr, int fd,
                              gboolean tls, GError **error)
{
    QsListener *l;

    if (addr) {
        fd = qs_listen_tcp(addr, error);
        if (fd < 0) {
            return NULL;
        }
    } else if (!qs_listen_adopt_fd(fd, error)) {
        return NULL;
    }
    l = g_new0(QsListener, 1);
    l->server = s;
    l->fd = fd;
    l->tls = tls;
    listener_retry(l);
    return l;
}

QsServer *qs_server_new(const QsNetConfig *cfg,
                        const QsServerCallbacks *callbacks,
                        gpointer user_data, GError **error)
{
    g_autoptr(QsServer) s = NULL;

    /* No credential must mean "asked for none", never "forgot one". */
    if (!cfg->ticket && !cfg->token_keys && !cfg->disable_ticketing) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "no ticket, no token keys and ticketing not disabled");
        return NULL;
    }
    s = g_new0(QsServer, 1);
    s->auth_disabled = cfg->disable_ticketing;
    if (cfg->token_keys &&
        !(s->tokens = qs_token_verifier_new(cfg->token_keys, cfg->token_keys_len, error))) {
        return NULL;
    }
    s->cb = *callbacks;
    s->user_data = user_data;
    s->web = cfg->web ? qs_web_ref(cfg->web) : NULL;
    s->ticket = cfg->ticket ? qs_ticket_ref(cfg->ticket) : NULL;
    s->view_ticket = cfg->view_ticket ? qs_ticket_ref(cfg->view_ticket) : NULL;
    s->secure_mask = cfg->secure_mask;
    s->max_pending = MAX(cfg->max_pending, 1);
    s->max_pending_per_source = MAX(cfg->max_pending_per_source, 1);
    s->link_timeout_ms = MAX(cfg->link_timeout_ms, 100);
    s->auth_fail_delay_ms = MAX(cfg->auth_fail_delay_ms, 0);
    g_queue_init(&s->pending);
    s->per_source = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                          NULL);
    s->keys = qs_key_pool_new(KEY_SPARES);
    s->rate_clock = cfg->link_rate_clock ? cfg->link_rate_clock : g_get_monotonic_time;
    if (cfg->max_link_rate > 0) {
        s->rate = qs_rate_limit_new((guint)cfg->max_link_rate,
                                    (guint)MAX(cfg->max_link_burst, 1),
                                    RATE_SOURCES);
    }
    if (cfg->tls_listen || cfg->tls_listen_fd >= 0) {
        s->tls_dir = g_strdup(cfg->tls_dir);
        s->creds = qs_tls_creds_load(cfg->tls_dir, error);
        if (!s->creds) {
            return NULL;
        }
    }
    if (cfg->listen || cfg->listen_fd >= 0) {
        s->listeners[0] = listener_new(s, cfg->listen, cfg->listen_fd, FALSE,
                                       error);
        if (!s->listeners[0]) {
            return NULL;
        }
    }
    if (cfg->tls_listen || cfg->tls_listen_fd >= 0) {
        s->listeners[1] = listener_new(s, cfg->tls_listen, cfg->tls_listen_fd,
                                       TRUE, error);
        if (!s->listeners[1]) {
            return NULL;
        }
    }
    if (s->web && qs_web_missing(s->web)) {
        g_message("console page: %s; a browser is told so", qs_web_missing(s->web));
    } else if (s->web) {
        g_message("console page: on (spice-html5: %u files, %" G_GSIZE_FORMAT " KiB, kept "
                  "gzipped in %" G_GSIZE_FORMAT " KiB)", qs_web_n_files(s->web),
                  qs_web_total_bytes(s->web) / 1024, qs_web_kept_bytes(s->web) / 1024);
    }
    if (cfg->disable_ticketing) {
        g_message(cfg->insecure
                  ? "no credential (--disable-ticketing --insecure): anyone who reaches "
                    "the port gets the console; keep it on a network only a proxy reaches"
                  : "no credential (--disable-ticketing): loopback listeners only");
    } else {
        g_message("credentials: %s%s%s", s->ticket ? "ticket" : "no fixed ticket",
                  s->view_ticket ? ", view-only ticket" : "",
                  s->tokens ? ", signed tokens" : "");
    }
    return g_steal_pointer(&s);
}

void qs_server_free(QsServer *s)
{
    if (!s) {
        return;
    }
    listener_free(s->listeners[0]);
    listener_free(s->listeners[1]);
    qs_link_stage_drop_all(s);
    if (s->per_source) {
        g_hash_table_unref(s->per_source);
    }
    qs_key_pool_free(s->keys);
    qs_rate_limit_free(s->rate);
    qs_tls_creds_unref(s->creds);
    qs_ticket_unref(s->ticket);
    qs_ticket_unref(s->view_ticket);
    qs_token_verifier_free(s->tokens);
    qs_web_unref(s->web);
    g_free(s->tls_dir);
    g_free(s);
}

gboolean qs_server_reload_tls(QsServer *s, GError **error)
{
    QsTlsCreds *creds;

    if (!s->tls_dir) {
        return TRUE;
    }
    creds = qs_tls_creds_load(s->tls_dir, error);
    if (!creds) {
        return FALSE;
    }
    qs_tls_creds_unref(s->creds);
    s->creds = creds;
    return TRUE;
}

gboolean qs_server_set_tls_pem(QsServer *s, const guint8 *cert,
                               gsize cert_len, const guint8 *key,
                               gsize key_len, GError **error)
{
    QsTlsCreds *creds;

    if (!s->creds) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                    "no TLS listener: nothing uses certificates");
        return FALSE;
    }
    creds = qs_tls_creds_new_from_pem(cert, cert_len, key, key_len, error);
    if (!creds) {
        return FALSE;
    }
    qs_tls_creds_unref(s->creds);
    s->creds = creds;
    return TRUE;
}

const QsTicket *qs_server_get_ticket(QsServer *s)
{
    return s->ticket;
}

void qs_server_set_view_ticket(QsServer *s, QsTicket *ticket)
{
    qs_ticket_unref(s->view_ticket);
    s->view_ticket = ticket ? qs_ticket_ref(ticket) : NULL;
}

void qs_server_set_ticket(QsServer *s, QsTicket *ticket)
{
    qs_ticket_unref(s->ticket);
    s->ticket = ticket ? qs_ticket_ref(ticket) : NULL;
    if (ticket) {
        s->auth_disabled = FALSE;
    }
}

gboolean qs_server_auth_enabled(QsServer *s)
{
    return !s->auth_disabled;
}

gboolean qs_server_set_token_keys(QsServer *s, const char *text, gsize len,
                                  GError **error)
{
    if (!s->tokens) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                    "this helper was started without token keys");
        return FALSE;
    }
    return qs_token_verifier_set_keys(s->tokens, text, len, error);
}

const QsTicket *qs_server_get_view_ticket(QsServer *s)
{
    return s->view_ticket;
}

guint16 qs_server_get_port(QsServer *s, gboolean tls)
{
    QsListener *l = s->listeners[tls ? 1 : 0];

    return l ? qs_listen_get_port(l->fd) : 0;
}

/* Whether `fd` is a connected stream socket; *sa its peer's address. */
static gboolean check_client_socket(int fd, struct sockaddr_storage *sa, socklen_t *salen,
                                    GError **error)
{
    int type = 0, acc = 0;
    socklen_t len = sizeof(type);

    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "the descriptor is not a socket (%s)", g_strerror(errno));
        return FALSE;
    }
    len = sizeof(acc);
    if (type != SOCK_STREAM) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "the descriptor is not a stream socket (type %d)", type);
        return FALSE;
    }
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) == 0 && acc) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "the descriptor is a listening socket, not a client's connection");
        return FALSE;
    }
    if (getpeername(fd, (struct sockaddr *)sa, salen) < 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "the socket is not connected (%s)", g_strerror(errno));
        return FALSE;
    }
    if (!g_unix_set_fd_nonblocking(fd, TRUE, NULL) || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                    "the socket: %s", g_strerror(errno));
        return FALSE;
    }
    return TRUE;
}

char *qs_server_add_client(QsServer *s, int fd, gboolean skip_auth, gboolean tls,
                           GError **error)
{
    struct sockaddr_storage sa = { 0 };
    socklen_t salen = sizeof(sa);
    char source[NI_MAXHOST + 4];
    g_autofree char *peer = NULL;

    if (tls && !s->creds) {
        close(fd);
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                    "TLS asked for, but this helper has no TLS listener (no certificate)");
        return NULL;
    }
    if (!check_client_socket(fd, &sa, &salen, error)) {
        close(fd);
        return NULL;
    }
    s->added++;
    if (sa.ss_family == AF_INET || sa.ss_family == AF_INET6) {
        name_peer(&sa, salen, &peer, source, sizeof(source));
    } else {
        peer = g_strdup_printf("local:%" G_GUINT64_FORMAT, s->added);
    }
    /* One source for them all: the caller vetted each client, and a flood
     * of added sockets evicts its own oldest, not the listeners' links. */
    start_link(s, fd, sa.ss_family, tls, peer, QS_SERVER_ADDED_SOURCE, skip_auth);
    return g_steal_pointer(&peer);
}

guint qs_server_get_pending_count(QsServer *s)
{
    return s->pending.length;
}

guint64 qs_server_get_rate_limited_count(QsServer *s)
{
    return s->rate_refused;
}
