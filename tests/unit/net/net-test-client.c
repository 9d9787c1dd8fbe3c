/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Blocking SPICE link client used by the net socket tests. */

#include <glib/gstdio.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include "net/qs-link.h"
#include "net-test-client.h"

static int tls_max_version;
static const char *bind_source;

NetTestClient *net_test_client_connect_from(guint16 port, const char *source)
{
    NetTestClient *c;

    bind_source = source;
    c = net_test_client_connect(port, FALSE);
    bind_source = NULL;
    return c;
}

NetTestClient *net_test_client_connect_tls_max(guint16 port, int max_version)
{
    NetTestClient *c;

    tls_max_version = max_version;
    c = net_test_client_connect(port, TRUE);
    tls_max_version = 0;
    return c;
}

/* Frees `c` if the handshake fails. */
static gboolean start_tls(NetTestClient *c)
{
    c->ctx = SSL_CTX_new(TLS_client_method());
    /* The test only checks the transport; certificate checks are the
     * client's business. */
    SSL_CTX_set_verify(c->ctx, SSL_VERIFY_NONE, NULL);
    if (tls_max_version) {
        /* Old versions need the lowest security level in OpenSSL 3. */
        SSL_CTX_set_security_level(c->ctx, 0);
        SSL_CTX_set_min_proto_version(c->ctx, TLS1_VERSION);
        SSL_CTX_set_max_proto_version(c->ctx, tls_max_version);
    }
    c->ssl = SSL_new(c->ctx);
    SSL_set_fd(c->ssl, c->fd);
    if (SSL_connect(c->ssl) != 1) {
        g_test_message("TLS handshake failed");
        net_test_client_free(c);
        return FALSE;
    }
    return TRUE;
}

NetTestClient *net_test_client_connect(guint16 port, gboolean tls)
{
    NetTestClient *c = g_new0(NetTestClient, 1);
    struct sockaddr_in sa = {
        .sin_family = AF_INET,
        .sin_port = htons(port),
        .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
    };
    struct timeval tv = { .tv_sec = 5 };

    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    g_assert_cmpint(c->fd, >=, 0);
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    /* Header and body go in two writes: no Nagle wait between them. */
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
    if (bind_source) {
        struct sockaddr_in from = { .sin_family = AF_INET };

        g_assert_cmpint(inet_pton(AF_INET, bind_source, &from.sin_addr), ==, 1);
        if (bind(c->fd, (struct sockaddr *)&from, sizeof(from)) < 0) {
            g_test_message("bind %s: %s", bind_source, g_strerror(errno));
            net_test_client_free(c);
            return NULL;
        }
    }
    if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        g_test_message("connect: %s", g_strerror(errno));
        net_test_client_free(c);
        return NULL;
    }
    return tls && !start_tls(c) ? NULL : c;
}

NetTestClient *net_test_client_new_from_fd(int fd, gboolean tls)
{
    NetTestClient *c = g_new0(NetTestClient, 1);
    struct timeval tv = { .tv_sec = 5 };

    c->fd = fd;
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    return tls && !start_tls(c) ? NULL : c;
}

void net_test_client_free(NetTestClient *c)
{
    if (!c) {
        return;
    }
    if (c->ssl) {
        SSL_free(c->ssl);
    }
    if (c->ctx) {
        SSL_CTX_free(c->ctx);
    }
    close(c->fd);
    g_free(c);
}

gboolean net_test_client_send(NetTestClient *c, const void *buf, gsize len)
{
    const guint8 *p = buf;

    while (len > 0) {
        ssize_t n = c->ssl ? SSL_write(c->ssl, p, (int)len)
                           : send(c->fd, p, len, MSG_NOSIGNAL);

        if (n <= 0) {
            return FALSE;
        }
        p += n;
        len -= (gsize)n;
    }
    return TRUE;
}

gboolean net_test_client_recv(NetTestClient *c, void *buf, gsize len)
{
    guint8 *p = buf;

    while (len > 0) {
        ssize_t n = c->ssl ? SSL_read(c->ssl, p, (int)len)
                           : recv(c->fd, p, len, 0);

        if (n <= 0) {
            return FALSE;
        }
        p += n;
        len -= (gsize)n;
    }
    return TRUE;
}

gboolean net_test_client_wait_eof(NetTestClient *c, guint ms)
{
    gint64 end = g_get_monotonic_time() + (gint64)ms * 1000;

    for (;;) {
        struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
        gint64 left = (end - g_get_monotonic_time()) / 1000;
        guint8 buf[4096];
        ssize_t n;

        if (left <= 0 || poll(&pfd, 1, (int)left) <= 0) {
            return FALSE;
        }
        n = c->ssl ? SSL_read(c->ssl, buf, sizeof(buf))
                   : recv(c->fd, buf, sizeof(buf), 0);
        if (n == 0 || (n < 0 && !c->ssl && errno == ECONNRESET) ||
            (n <= 0 && c->ssl)) {
            return TRUE;
        }
    }
}

gboolean net_test_client_send_link(NetTestClient *c, guint32 conn_id,
                                   guint8 type, guint8 id,
                                   guint32 common_caps, guint32 channel_caps)
{
    guint8 buf[16 + 18 + 8];

    c->client_common_caps = common_caps;
    qs_link_put_u32(buf, SPICE_MAGIC);
    qs_link_put_u32(buf + 4, 2);
    qs_link_put_u32(buf + 8, 2);
    qs_link_put_u32(buf + 12, 18 + 8);
    qs_link_put_u32(buf + 16, conn_id);
    buf[20] = type;
    buf[21] = id;
    qs_link_put_u32(buf + 22, 1);
    qs_link_put_u32(buf + 26, 1);
    qs_link_put_u32(buf + 30, 18);
    qs_link_put_u32(buf + 34, common_caps);
    qs_link_put_u32(buf + 38, channel_caps);
    return net_test_client_send(c, buf, sizeof(buf));
}

int net_test_client_read_reply(NetTestClient *c)
{
    guint8 hdr[16];
    guint8 body[4096];
    guint32 size, err, n_common, n_channel, offset;

    if (!net_test_client_recv(c, hdr, sizeof(hdr))) {
        return -1;
    }
    g_assert_cmphex(qs_link_get_u32(hdr), ==, SPICE_MAGIC);
    size = qs_link_get_u32(hdr + 12);
    g_assert_cmpuint(size, >=, 178);
    g_assert_cmpuint(size, <=, sizeof(body));
    if (!net_test_client_recv(c, body, size)) {
        return -1;
    }
    err = qs_link_get_u32(body);
    memcpy(c->spki, body + 4, 162);
    n_common = qs_link_get_u32(body + 166);
    n_channel = qs_link_get_u32(body + 170);
    offset = qs_link_get_u32(body + 174);
    g_assert_cmpuint(offset, ==, 178);
    g_assert_cmpuint(offset + 4 * (n_common + n_channel), ==, size);
    c->server_common_caps = n_common ? qs_link_get_u32(body + 178) : 0;
    c->server_channel_caps =
        n_channel ? qs_link_get_u32(body + 178 + 4 * n_common) : 0;
    /* spice-gtk follows the server's bit; a client that does not know the
     * mini header does not advertise it and keeps the full one. */
    c->mini = ((c->server_common_caps & c->client_common_caps) >>
               SPICE_COMMON_CAP_MINI_HEADER) & 1;
    return (int)err;
}

static void encrypt_ticket(const guint8 spki[162], const char *password,
                           guint8 out[128])
{
    const unsigned char *p = spki;
    EVP_PKEY *pk = d2i_PUBKEY(NULL, &p, 162);
    EVP_PKEY_CTX *ctx;
    size_t outlen = 128;

    g_assert_nonnull(pk);
    ctx = EVP_PKEY_CTX_new(pk, NULL);
    g_assert_cmpint(EVP_PKEY_encrypt_init(ctx), ==, 1);
    g_assert_cmpint(EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING),
                    ==, 1);
    g_assert_cmpint(EVP_PKEY_encrypt(ctx, out, &outlen,
                                     (const unsigned char *)password,
                                     strlen(password) + 1), ==, 1);
    g_assert_cmpuint(outlen, ==, 128);
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(pk);
}

int net_test_client_auth(NetTestClient *c, gboolean selection,
                         const char *password)
{
    guint8 buf[4 + 128];
    gsize off = 0;

    if (selection) {
        qs_link_put_u32(buf, SPICE_COMMON_CAP_AUTH_SPICE);
        off = 4;
    }
    encrypt_ticket(c->spki, password, buf + off);
    if (!net_test_client_send(c, buf, off + 128) ||
        !net_test_client_recv(c, buf, 4)) {
        return -1;
    }
    return (int)qs_link_get_u32(buf);
}

int net_test_client_link(NetTestClient *c, guint32 conn_id, guint8 type,
                         const char *password)
{
    int err;

    if (!net_test_client_send_link(c, conn_id, type, 0, 0xd, 0)) {
        return -1;
    }
    err = net_test_client_read_reply(c);
    if (err != 0) {
        return err;
    }
    return net_test_client_auth(c, TRUE, password);
}

gboolean net_test_client_send_msg(NetTestClient *c, guint16 type,
                                  const void *data, guint32 size)
{
    guint8 hdr[18];
    gsize n;

    if (c->mini) {
        hdr[0] = type & 0xff;
        hdr[1] = type >> 8;
        qs_link_put_u32(hdr + 2, size);
        n = 6;
    } else {
        memset(hdr, 0, 8);
        hdr[8] = type & 0xff;
        hdr[9] = type >> 8;
        qs_link_put_u32(hdr + 10, size);
        qs_link_put_u32(hdr + 14, 0);
        n = 18;
    }
    return net_test_client_send(c, hdr, n) &&
           (size == 0 || net_test_client_send(c, data, size));
}

guint8 *net_test_client_recv_msg(NetTestClient *c, guint16 *type,
                                 guint32 *size)
{
    guint8 hdr[18];
    const guint8 *h = hdr;
    guint8 *body;

    if (!net_test_client_recv(c, hdr, c->mini ? 6 : 18)) {
        return NULL;
    }
    if (!c->mini) {
        c->last_serial = qs_link_get_u32(hdr) |
                         (guint64)qs_link_get_u32(hdr + 4) << 32;
        h = hdr + 8;
    }
    *type = (guint16)(h[0] | h[1] << 8);
    *size = qs_link_get_u32(h + 2);
    g_assert_cmpuint(*size, <=, 64 << 20);
    body = g_malloc(*size + 1);
    if (*size && !net_test_client_recv(c, body, *size)) {
        g_free(body);
        return NULL;
    }
    return body;
}

char *net_test_make_tls_dir(void)
{
    g_autofree char *dir = g_dir_make_tmp("qs-net-tls-XXXXXX", NULL);
    g_autofree char *key = g_build_filename(dir, "server-key.pem", NULL);
    g_autofree char *cert = g_build_filename(dir, "server-cert.pem", NULL);
    const char *argv[] = {
        "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
        "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=localhost",
        "-days", "1", "-keyout", key, "-out", cert, NULL,
    };
    gint status;

    if (!g_spawn_sync(NULL, (char **)argv, NULL,
                      G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL |
                      G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, NULL, NULL,
                      &status, NULL) ||
        !g_spawn_check_wait_status(status, NULL)) {
        return NULL;
    }
    return g_steal_pointer(&dir);
}

void net_test_remove_tls_dir(const char *dir)
{
    static const char *const files[] = { "server-key.pem", "server-cert.pem" };

    for (guint i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *p = g_build_filename(dir, files[i], NULL);

        g_unlink(p);
    }
    g_rmdir(dir);
}
