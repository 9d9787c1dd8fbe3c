/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A stream socket to a qemu chardev: reads on request, a write queue, qemu closing and (on a listening socket, or dialed on demand) connecting again. */
#include "net/qs-chardev.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define DEFAULT_LOW_WATER (64u * 1024u)
/* Dialed chardevs: the pause after a first failed dial, doubled up to the
 * ceiling; a connection qemu ends sooner than QUICK_CLOSE_US after it
 * opened is dialed again only after REDIAL_AFTER_QUICK_CLOSE_MS, so a
 * chardev that closes at once cannot keep us dialing in a loop. */
#define DIAL_RETRY_FIRST_MS 100u
#define DIAL_RETRY_MAX_MS 5000u
#define QUICK_CLOSE_US (1000 * 1000)
#define REDIAL_AFTER_QUICK_CLOSE_MS 1000u

typedef struct {
    GSource source;
    QsChardev *cd;
} ChardevSource;

struct QsChardev {
    char *name;
    int listen_fd;              /* -1 for a connected descriptor */
    int fd;                     /* the connection to qemu, -1 when closed */
    GSource *source;
    gpointer listen_tag;
    gpointer conn_tag;

    gboolean reading;
    gboolean accepting;         /* a listening descriptor takes qemu's connection */
    gboolean hup;               /* qemu hung up; what it wrote is still to read */
    GByteArray *out;            /* bytes for qemu from out_off on */
    gsize out_off;
    gsize low_water;
    gboolean above_low_water;

    QsChardevHandlers handlers;
    gpointer user_data;

    /* Dialed: connections come from `dialer` on demand. */
    gboolean dialed;
    QsChardevDialer dialer;
    gpointer dialer_data;
    gboolean dialing;           /* a dial is outstanding */
    gboolean dial_gave_up;      /* qemu's chardev is gone for good */
    GSource *next_dial;         /* the next dial, scheduled */
    guint dial_delay_ms;        /* before the next dial */
    guint retry_ms;             /* the current run of failures' pause */
    gint64 opened_us;
};

static void update(QsChardev *cd);

static gboolean on_next_dial(gpointer data)
{
    QsChardev *cd = data;

    g_source_unref(g_steal_pointer(&cd->next_dial));
    cd->dialing = TRUE;
    cd->dialer.dial(cd, cd->dialer_data);
    return G_SOURCE_REMOVE;
}

/* Dials from the loop, never from inside the caller that made it wanted. */
static void schedule_dial(QsChardev *cd)
{
    gboolean wanted = cd->fd < 0 && cd->accepting && !cd->dialing && !cd->dial_gave_up;

    if (!wanted && cd->next_dial) {
        g_source_destroy(cd->next_dial);
        g_source_unref(g_steal_pointer(&cd->next_dial));
    } else if (wanted && !cd->next_dial) {
        g_autoptr(GMainContext) ctx = g_main_context_ref_thread_default();

        cd->next_dial = g_timeout_source_new(cd->dial_delay_ms);
        g_source_set_callback(cd->next_dial, on_next_dial, cd, NULL);
        g_source_attach(cd->next_dial, ctx);
    }
}

static void update(QsChardev *cd)
{
    ChardevSource *src = (ChardevSource *)cd->source;
    GIOCondition cond = 0;

    if (cd->dialed) {
        schedule_dial(cd);
    }
    if (cd->listen_tag) {
        g_source_modify_unix_fd(&src->source, cd->listen_tag,
                                cd->fd < 0 && cd->accepting ? G_IO_IN : 0);
    }
    if (cd->fd < 0) {
        return;
    }
    if (cd->reading) {
        cond |= G_IO_IN;
    }
    if (cd->out->len > cd->out_off) {
        cond |= G_IO_OUT;
    }
    /* A hang-up is reported whatever we ask for: while not reading, stop
     * polling until reading resumes, which takes what is left and the EOF. */
    if (cd->hup && !cd->reading && !(cond & G_IO_OUT)) {
        if (cd->conn_tag) {
            g_source_remove_unix_fd(&src->source, cd->conn_tag);
            cd->conn_tag = NULL;
        }
        return;
    }
    if (!cd->conn_tag) {
        cd->conn_tag = g_source_add_unix_fd(&src->source, cd->fd, cond);
    } else {
        g_source_modify_unix_fd(&src->source, cd->conn_tag, cond);
    }
}

/* `by_qemu`: the connection ended on qemu's side (or failed), not at our
 * request. */
static void drop_connection(QsChardev *cd, const char *reason, gboolean by_qemu)
{
    gboolean for_good = cd->listen_fd < 0 && !cd->dialed;

    if (cd->fd < 0) {
        return;
    }
    if (cd->conn_tag) {
        g_source_remove_unix_fd(cd->source, cd->conn_tag);
        cd->conn_tag = NULL;
    }
    close(cd->fd);
    cd->fd = -1;
    cd->hup = FALSE;
    g_byte_array_set_size(cd->out, 0);
    cd->out_off = 0;
    cd->above_low_water = FALSE;
    g_message("chardev %s: qemu's end closed (%s)%s", cd->name, reason,
              for_good ? "; it was a connected socket, so the port stays closed"
              : cd->dialed ? "; a new connection is registered with qemu when wanted"
                           : "; waiting for qemu to connect again");
    cd->dial_delay_ms = by_qemu && g_get_monotonic_time() - cd->opened_us < QUICK_CLOSE_US
                        ? REDIAL_AFTER_QUICK_CLOSE_MS : 0;
    update(cd);
    if (cd->handlers.closed) {
        cd->handlers.closed(cd, reason, for_good, cd->user_data);
    }
}

static void do_accept(QsChardev *cd)
{
    int fd = accept4(cd->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

    if (fd < 0) {
        if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
            g_warning("chardev %s: accepting qemu's connection: %s", cd->name,
                      g_strerror(errno));
        }
        return;
    }
    cd->fd = fd;
    cd->opened_us = g_get_monotonic_time();
    g_message("chardev %s: qemu connected", cd->name);
    update(cd);
    if (cd->handlers.opened) {
        cd->handlers.opened(cd, cd->user_data);
    }
}

static void do_write(QsChardev *cd)
{
    while (cd->fd >= 0 && cd->out->len > cd->out_off) {
        ssize_t w = send(cd->fd, cd->out->data + cd->out_off,
                         cd->out->len - cd->out_off, MSG_NOSIGNAL);

        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
        }
        if (w < 0) {
            drop_connection(cd, g_strerror(errno), TRUE);
            return;
        }
        cd->out_off += (gsize)w;
    }
    if (cd->out_off == cd->out->len) {
        g_byte_array_set_size(cd->out, 0);
        cd->out_off = 0;
    } else if (cd->out_off > cd->out->len / 2) {
        g_byte_array_remove_range(cd->out, 0, (guint)cd->out_off);
        cd->out_off = 0;
    }
    update(cd);
    if (cd->above_low_water && qs_chardev_get_queued(cd) < cd->low_water) {
        cd->above_low_water = FALSE;
        if (cd->handlers.drained) {
            cd->handlers.drained(cd, cd->user_data);
        }
    }
}

/* One chunk per dispatch, so a caller's pause takes effect after it. */
static void do_read(QsChardev *cd)
{
    guint8 buf[QS_CHARDEV_READ_CHUNK];
    ssize_t n;

    do {
        n = read(cd->fd, buf, sizeof(buf));
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
    }
    if (n <= 0) {
        drop_connection(cd, n == 0 ? "end of stream" : g_strerror(errno), TRUE);
        return;
    }
    if (cd->handlers.data) {
        cd->handlers.data(cd, buf, (gsize)n, cd->user_data);
    }
}

static gboolean source_dispatch(GSource *source, GSourceFunc cb, gpointer data)
{
    QsChardev *cd = ((ChardevSource *)source)->cd;
    GIOCondition lcond = cd->listen_tag ? g_source_query_unix_fd(source, cd->listen_tag) : 0;
    GIOCondition cond = cd->conn_tag ? g_source_query_unix_fd(source, cd->conn_tag) : 0;

    (void)cb, (void)data;
    if (cd->fd >= 0 && (cond & G_IO_OUT)) {
        do_write(cd);
    }
    if (cd->fd >= 0 && (cond & (G_IO_HUP | G_IO_ERR)) && !cd->reading) {
        cd->hup = TRUE;
        update(cd);
    } else if (cd->fd >= 0 && (cond & (G_IO_IN | G_IO_HUP | G_IO_ERR))) {
        do_read(cd);
    }
    if (cd->fd < 0 && (lcond & G_IO_IN)) {
        do_accept(cd);
    }
    return G_SOURCE_CONTINUE;
}

static GSourceFuncs source_funcs = {
    .dispatch = source_dispatch,
};

static gboolean prepare_fd(const char *name, int fd, gboolean *listening, GError **error)
{
    int type = 0, acc = 0;
    socklen_t len = sizeof(type);
    int flags;

    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                    "chardev %s: descriptor %d is not a socket: %s", name, fd,
                    g_strerror(errno));
        return FALSE;
    }
    if (type != SOCK_STREAM) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "chardev %s: descriptor %d is not a stream socket (type %d)",
                    name, fd, type);
        return FALSE;
    }
    len = sizeof(acc);
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) < 0) {
        acc = 0;
    }
    flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
        fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                    "chardev %s: descriptor %d: %s", name, fd, g_strerror(errno));
        return FALSE;
    }
    *listening = acc != 0;
    return TRUE;
}

static QsChardev *chardev_new(const char *name, int listen_fd, int fd)
{
    QsChardev *cd = g_new0(QsChardev, 1);

    cd->name = g_strdup(name);
    cd->listen_fd = listen_fd;
    cd->fd = fd;
    cd->out = g_byte_array_new();
    cd->low_water = DEFAULT_LOW_WATER;
    cd->accepting = TRUE;
    cd->opened_us = g_get_monotonic_time();
    cd->source = g_source_new(&source_funcs, sizeof(ChardevSource));
    ((ChardevSource *)cd->source)->cd = cd;
    g_source_set_name(cd->source, "qs-chardev");
    if (listen_fd >= 0) {
        cd->listen_tag = g_source_add_unix_fd(cd->source, listen_fd, G_IO_IN);
    }
    return cd;
}

static void chardev_start(QsChardev *cd)
{
    g_autoptr(GMainContext) ctx = g_main_context_ref_thread_default();

    update(cd);
    g_source_attach(cd->source, ctx);
}

QsChardev *qs_chardev_new(const char *name, int fd, GError **error)
{
    QsChardev *cd;
    gboolean listening;

    if (!prepare_fd(name, fd, &listening, error)) {
        return NULL;
    }
    cd = chardev_new(name, listening ? fd : -1, listening ? -1 : fd);
    chardev_start(cd);
    return cd;
}

QsChardev *qs_chardev_new_dialed(const char *name, const QsChardevDialer *dialer,
                                 gpointer data)
{
    QsChardev *cd = chardev_new(name, -1, -1);

    cd->dialed = TRUE;
    cd->dialer = *dialer;
    cd->dialer_data = data;
    chardev_start(cd);
    return cd;
}

void qs_chardev_dialed(QsChardev *cd, int fd)
{
    g_autoptr(GError) error = NULL;
    gboolean listening = FALSE;

    if (!cd->dialing || cd->fd >= 0) {
        g_warning("chardev %s: a connection nobody dialed; closed", cd->name);
        close(fd);
        return;
    }
    cd->dialing = FALSE;
    if (!prepare_fd(cd->name, fd, &listening, &error) || listening) {
        close(fd);
        qs_chardev_dial_failed(cd, error ? error->message : "a listening socket", FALSE);
        return;
    }
    if (!cd->accepting) {
        /* Not wanted any more (usbredir: the client's channel went). */
        close(fd);
        update(cd);
        return;
    }
    cd->fd = fd;
    cd->retry_ms = 0;
    cd->dial_delay_ms = 0;
    cd->opened_us = g_get_monotonic_time();
    g_message("chardev %s: qemu connected", cd->name);
    update(cd);
    if (cd->handlers.opened) {
        cd->handlers.opened(cd, cd->user_data);
    }
}

void qs_chardev_dial_failed(QsChardev *cd, const char *reason, gboolean for_good)
{
    cd->dialing = FALSE;
    if (for_good) {
        cd->dial_gave_up = TRUE;
        g_message("chardev %s: %s; not trying again", cd->name, reason);
    } else {
        if (cd->retry_ms == 0) {
            g_message("chardev %s: %s; trying again (at most every %u ms)", cd->name,
                      reason, DIAL_RETRY_MAX_MS);
        }
        cd->retry_ms = cd->retry_ms ? MIN(cd->retry_ms * 2, DIAL_RETRY_MAX_MS)
                                    : DIAL_RETRY_FIRST_MS;
        cd->dial_delay_ms = cd->retry_ms;
    }
    update(cd);
}

void qs_chardev_free(QsChardev *cd)
{
    if (!cd) {
        return;
    }
    g_source_destroy(cd->source);
    g_source_unref(cd->source);
    if (cd->next_dial) {
        g_source_destroy(cd->next_dial);
        g_source_unref(cd->next_dial);
    }
    if (cd->dialed && cd->dialer.release) {
        cd->dialer.release(cd->dialer_data);
    }
    if (cd->fd >= 0) {
        close(cd->fd);
    }
    if (cd->listen_fd >= 0) {
        close(cd->listen_fd);
    }
    g_byte_array_unref(cd->out);
    g_free(cd->name);
    g_free(cd);
}

void qs_chardev_set_handlers(QsChardev *cd, const QsChardevHandlers *handlers,
                             gpointer user_data)
{
    cd->handlers = handlers ? *handlers : (QsChardevHandlers){ 0 };
    cd->user_data = user_data;
}

const char *qs_chardev_get_name(QsChardev *cd)
{
    return cd->name;
}

gboolean qs_chardev_is_open(QsChardev *cd)
{
    return cd->fd >= 0;
}

gboolean qs_chardev_is_listening(QsChardev *cd)
{
    return cd->listen_fd >= 0 || cd->dialed;
}

void qs_chardev_set_reading(QsChardev *cd, gboolean reading)
{
    reading = !!reading;
    if (cd->reading != reading) {
        cd->reading = reading;
        update(cd);
    }
}

gboolean qs_chardev_write(QsChardev *cd, const guint8 *data, gsize len)
{
    if (cd->fd < 0) {
        return FALSE;
    }
    g_byte_array_append(cd->out, data, (guint)len);
    if (qs_chardev_get_queued(cd) >= cd->low_water) {
        cd->above_low_water = TRUE;
    }
    /* Written from the loop: a write error here must not call back into
     * the caller that is writing. */
    update(cd);
    return TRUE;
}

void qs_chardev_set_accepting(QsChardev *cd, gboolean accepting)
{
    accepting = !!accepting;
    if (cd->accepting != accepting) {
        cd->accepting = accepting;
        update(cd);
    }
}

void qs_chardev_disconnect(QsChardev *cd, const char *reason)
{
    drop_connection(cd, reason, FALSE);
}

gsize qs_chardev_get_queued(QsChardev *cd)
{
    return cd->out->len - cd->out_off;
}

void qs_chardev_set_low_water(QsChardev *cd, gsize low_water)
{
    cd->low_water = MAX(low_water, 1);
}
