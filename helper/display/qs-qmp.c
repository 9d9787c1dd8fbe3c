/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QMP client for the development attach: parse replies, pass the fd. */

#include "qs-qmp.h"

#include <errno.h>
#include <gio/gio.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* QMP replies are small and flat; deeper nesting is not from qemu. */
#define MAX_DEPTH 32
#define MAX_STRING 4096

typedef struct {
    const char *p;
    const char *end;
    int depth;
} Json;

static void skip_ws(Json *j)
{
    while (j->p < j->end &&
           (*j->p == ' ' || *j->p == '\t' || *j->p == '\r' || *j->p == '\n')) {
        j->p++;
    }
}

static gboolean expect(Json *j, char c)
{
    skip_ws(j);
    if (j->p < j->end && *j->p == c) {
        j->p++;
        return TRUE;
    }
    return FALSE;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* Parses a string; stores it (decoded, bounded) in *out if out != NULL.
 * \u escapes outside ASCII become '?': we only print these strings. */
static gboolean parse_string(Json *j, char **out)
{
    g_autoptr(GString) s = out ? g_string_new(NULL) : NULL;

    if (!expect(j, '"')) {
        return FALSE;
    }
    while (j->p < j->end && *j->p != '"') {
        char c = *j->p++;

        if ((unsigned char)c < 0x20) {
            return FALSE;
        }
        if (c == '\\') {
            if (j->p >= j->end) {
                return FALSE;
            }
            c = *j->p++;
            switch (c) {
            case '"': case '\\': case '/':
                break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'u': {
                int v = 0;

                if (j->end - j->p < 4) {
                    return FALSE;
                }
                for (int i = 0; i < 4; i++) {
                    int h = hex_value(j->p[i]);

                    if (h < 0) {
                        return FALSE;
                    }
                    v = v * 16 + h;
                }
                j->p += 4;
                c = (v >= 0x20 && v < 0x7f) ? (char)v : '?';
                break;
            }
            default:
                return FALSE;
            }
        }
        if (s && s->len < MAX_STRING) {
            g_string_append_c(s, c);
        }
    }
    if (j->p >= j->end) {
        return FALSE;
    }
    j->p++;
    if (out) {
        *out = g_string_free(g_steal_pointer(&s), FALSE);
    }
    return TRUE;
}

static gboolean parse_value(Json *j);

static gboolean parse_literal(Json *j)
{
    static const char *const words[] = { "true", "false", "null" };

    for (size_t i = 0; i < G_N_ELEMENTS(words); i++) {
        size_t n = strlen(words[i]);

        if ((size_t)(j->end - j->p) >= n && memcmp(j->p, words[i], n) == 0) {
            j->p += n;
            return TRUE;
        }
    }
    return FALSE;
}

static gboolean parse_number(Json *j)
{
    const char *start = j->p;

    if (j->p < j->end && *j->p == '-') {
        j->p++;
    }
    while (j->p < j->end && (g_ascii_isdigit(*j->p) || *j->p == '.' ||
                             *j->p == 'e' || *j->p == 'E' || *j->p == '+' ||
                             *j->p == '-')) {
        j->p++;
    }
    return j->p > start && g_ascii_isdigit(j->p[-1]);
}

static gboolean parse_container(Json *j, char close, gboolean object)
{
    if (++j->depth > MAX_DEPTH) {
        return FALSE;
    }
    if (expect(j, close)) {
        j->depth--;
        return TRUE;
    }
    do {
        if (object && (!parse_string(j, NULL) || !expect(j, ':'))) {
            return FALSE;
        }
        if (!parse_value(j)) {
            return FALSE;
        }
    } while (expect(j, ','));
    j->depth--;
    return expect(j, close);
}

static gboolean parse_value(Json *j)
{
    skip_ws(j);
    if (j->p >= j->end) {
        return FALSE;
    }
    switch (*j->p) {
    case '{':
        j->p++;
        return parse_container(j, '}', TRUE);
    case '[':
        j->p++;
        return parse_container(j, ']', FALSE);
    case '"':
        return parse_string(j, NULL);
    case 't': case 'f': case 'n':
        return parse_literal(j);
    default:
        return parse_number(j);
    }
}

/* The "error" member: an object whose "class" and "desc" we keep. */
static gboolean parse_error_object(Json *j, QsQmpMessage *msg)
{
    if (!expect(j, '{')) {
        return FALSE;
    }
    if (expect(j, '}')) {
        return TRUE;
    }
    do {
        g_autofree char *key = NULL;
        char **slot = NULL;

        if (!parse_string(j, &key) || !expect(j, ':')) {
            return FALSE;
        }
        if (g_str_equal(key, "class")) {
            slot = &msg->error_class;
        } else if (g_str_equal(key, "desc")) {
            slot = &msg->error_desc;
        }
        skip_ws(j);
        if (slot && j->p < j->end && *j->p == '"') {
            g_free(*slot);
            *slot = NULL;
            if (!parse_string(j, slot)) {
                return FALSE;
            }
        } else if (!parse_value(j)) {
            return FALSE;
        }
    } while (expect(j, ','));
    return expect(j, '}');
}

gboolean qs_qmp_parse(const char *text, size_t len, QsQmpMessage *msg,
                      GError **error)
{
    Json j = { text, text + len, 1 };
    unsigned kinds = 0;

    memset(msg, 0, sizeof(*msg));
    if (!expect(&j, '{')) {
        goto bad;
    }
    if (!expect(&j, '}')) {
        do {
            g_autofree char *key = NULL;

            if (!parse_string(&j, &key) || !expect(&j, ':')) {
                goto bad;
            }
            if (g_str_equal(key, "QMP")) {
                msg->kind = QS_QMP_GREETING;
                kinds++;
            } else if (g_str_equal(key, "return")) {
                msg->kind = QS_QMP_RETURN;
                kinds++;
            } else if (g_str_equal(key, "error")) {
                msg->kind = QS_QMP_ERROR;
                kinds++;
                if (!parse_error_object(&j, msg)) {
                    goto bad;
                }
                continue;
            } else if (g_str_equal(key, "event")) {
                msg->kind = QS_QMP_EVENT;
                kinds++;
                g_free(msg->event);
                msg->event = NULL;
                if (!parse_string(&j, &msg->event)) {
                    goto bad;
                }
                continue;
            }
            if (!parse_value(&j)) {
                goto bad;
            }
        } while (expect(&j, ','));
        if (!expect(&j, '}')) {
            goto bad;
        }
    }
    skip_ws(&j);
    if (j.p != j.end) {
        goto bad;
    }
    if (kinds != 1) {
        qs_qmp_message_clear(msg);
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "QMP message is not a greeting, reply or event");
        return FALSE;
    }
    return TRUE;

bad:
    qs_qmp_message_clear(msg);
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                "malformed QMP message");
    return FALSE;
}

void qs_qmp_message_clear(QsQmpMessage *msg)
{
    g_clear_pointer(&msg->error_class, g_free);
    g_clear_pointer(&msg->error_desc, g_free);
    g_clear_pointer(&msg->event, g_free);
}

/* ---- I/O ---------------------------------------------------------------- */

typedef struct {
    int fd;
    int timeout_ms;
    GString *buf;
} Qmp;

static gboolean wait_fd(Qmp *q, short events, GError **error)
{
    struct pollfd pfd = { .fd = q->fd, .events = events };
    int r;

    do {
        r = poll(&pfd, 1, q->timeout_ms);
    } while (r < 0 && errno == EINTR);
    if (r == 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                    "QMP: no answer from qemu within %d ms", q->timeout_ms);
        return FALSE;
    }
    if (r < 0) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                    "QMP: poll failed: %s", g_strerror(errno));
        return FALSE;
    }
    return TRUE;
}

/* One reply or greeting, skipping events. */
static gboolean read_message(Qmp *q, QsQmpMessage *msg, GError **error)
{
    for (;;) {
        char *nl = memchr(q->buf->str, '\n', q->buf->len);

        if (nl) {
            size_t n = (size_t)(nl - q->buf->str);
            gboolean ok = qs_qmp_parse(q->buf->str, n, msg, error);

            g_string_erase(q->buf, 0, (gssize)(n + 1));
            if (!ok) {
                g_prefix_error(error, "QMP: ");
                return FALSE;
            }
            if (msg->kind != QS_QMP_EVENT) {
                return TRUE;
            }
            qs_qmp_message_clear(msg);
            continue;
        }
        if (q->buf->len >= QS_QMP_MAX_LINE) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                        "QMP: message longer than %d bytes", QS_QMP_MAX_LINE);
            return FALSE;
        }
        if (!wait_fd(q, POLLIN, error)) {
            return FALSE;
        }
        char chunk[4096];
        ssize_t r = recv(q->fd, chunk, sizeof(chunk), 0);

        if (r < 0 && (errno == EINTR || errno == EAGAIN)) {
            continue;
        }
        if (r <= 0) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
                        "QMP: qemu closed the connection%s%s",
                        r < 0 ? ": " : "", r < 0 ? g_strerror(errno) : "");
            return FALSE;
        }
        g_string_append_len(q->buf, chunk, r);
    }
}

/* Sends `cmd`, with `pass_fd` attached if >= 0, and reads its reply. */
static gboolean command(Qmp *q, const char *cmd, int pass_fd,
                        QsQmpMessage *reply, GError **error)
{
    size_t len = strlen(cmd), done = 0;

    while (done < len) {
        struct iovec iov = { (char *)cmd + done, len - done };
        union {
            char buf[CMSG_SPACE(sizeof(int))];
            struct cmsghdr align;
        } control;
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

        if (pass_fd >= 0 && done == 0) {
            struct cmsghdr *c;

            memset(&control, 0, sizeof(control));
            mh.msg_control = control.buf;
            mh.msg_controllen = sizeof(control.buf);
            c = CMSG_FIRSTHDR(&mh);
            c->cmsg_level = SOL_SOCKET;
            c->cmsg_type = SCM_RIGHTS;
            c->cmsg_len = CMSG_LEN(sizeof(int));
            memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
        }
        if (!wait_fd(q, POLLOUT, error)) {
            return FALSE;
        }
        ssize_t r = sendmsg(q->fd, &mh, MSG_NOSIGNAL);

        if (r < 0 && (errno == EINTR || errno == EAGAIN)) {
            continue;
        }
        if (r < 0) {
            g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                        "QMP: write failed: %s", g_strerror(errno));
            return FALSE;
        }
        done += (size_t)r;
    }
    return read_message(q, reply, error);
}

/* Runs `cmd` and turns an error reply into a GError. */
static gboolean run(Qmp *q, const char *what, const char *cmd, int pass_fd,
                    GError **error)
{
    QsQmpMessage reply;

    if (!command(q, cmd, pass_fd, &reply, error)) {
        return FALSE;
    }
    if (reply.kind == QS_QMP_ERROR) {
        const char *desc = reply.error_desc ? reply.error_desc : "no reason";

        if (strstr(desc, "p2p connections not accepted")) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                        "qemu is not in p2p mode (start it with "
                        "-display dbus,p2p=on): %s", desc);
        } else {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                        "QMP %s failed: %s", what, desc);
        }
        qs_qmp_message_clear(&reply);
        return FALSE;
    }
    if (reply.kind != QS_QMP_RETURN) {
        qs_qmp_message_clear(&reply);
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "QMP %s: unexpected answer", what);
        return FALSE;
    }
    return TRUE;
}

int qs_qmp_attach_dbus_p2p(const char *path, int timeout_ms, GError **error)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    g_autoptr(GString) buf = g_string_new(NULL);
    Qmp q = { -1, timeout_ms, buf };
    QsQmpMessage greeting;
    int pair[2] = { -1, -1 };
    int ret = -1;

    if (strlen(path) >= sizeof(addr.sun_path)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "QMP socket path '%s' is too long", path);
        return -1;
    }
    strcpy(addr.sun_path, path);
    q.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (q.fd < 0 || connect(q.fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
        int e = errno;

        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e),
                    "cannot connect to QMP socket '%s': %s", path,
                    g_strerror(e));
        goto out;
    }
    if (!read_message(&q, &greeting, error)) {
        goto out;
    }
    qs_qmp_message_clear(&greeting);
    if (greeting.kind != QS_QMP_GREETING) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "'%s' does not speak QMP", path);
        goto out;
    }
    if (!run(&q, "qmp_capabilities",
             "{\"execute\":\"qmp_capabilities\"}\n", -1, error)) {
        goto out;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                    "socketpair failed: %s", g_strerror(errno));
        goto out;
    }
    if (!run(&q, "getfd",
             "{\"execute\":\"getfd\",\"arguments\":"
             "{\"fdname\":\"qemu-spice-dbus\"}}\n", pair[1], error)) {
        goto out;
    }
    if (!run(&q, "add_client",
             "{\"execute\":\"add_client\",\"arguments\":"
             "{\"protocol\":\"@dbus-display\","
             "\"fdname\":\"qemu-spice-dbus\"}}\n", -1, error)) {
        /* Do not leave the named fd behind in qemu. */
        g_autoptr(GError) ignored = NULL;

        run(&q, "closefd", "{\"execute\":\"closefd\",\"arguments\":"
            "{\"fdname\":\"qemu-spice-dbus\"}}\n", -1, &ignored);
        goto out;
    }
    ret = pair[0];
    pair[0] = -1;

out:
    if (pair[0] >= 0) {
        close(pair[0]);
    }
    if (pair[1] >= 0) {
        close(pair[1]);
    }
    if (q.fd >= 0) {
        close(q.fd);
    }
    return ret;
}
