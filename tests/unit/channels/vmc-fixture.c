/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The chardev bridge tests' fixture: the hub, client links through its callbacks, qemu's end as a socket. */
#include "vmc-fixture.h"
#include "wire/qs-client-msg.h"
#include "wire/qs-vmc-msg.h"
#include "wire/qs-wire.h"

#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <spice/enums.h>
#include <spice/protocol.h>

void fixture_start(Fixture *fx, QsVmcBridge *b0, QsVmcBridge *b1)
{
    QsVmcBridge *bridges[2] = { b0, b1 };
    QsChannelsConfig cfg = { .vm_name = "vm", .bridges = bridges,
                             .n_bridges = b1 ? 2 : (b0 ? 1 : 0) };

    fx->bridge[0] = b0;
    fx->bridge[1] = b1;
    fx->screen = qs_screen_new();
    cfg.screen = fx->screen;
    fx->hub = qs_channels_new(&cfg);
}

void fixture_stop(Fixture *fx)
{
    g_clear_pointer(&fx->hub, qs_channels_free);
    fake_loop_run_pending();
    g_clear_pointer(&fx->main, qs_conn_unref);
    g_clear_pointer(&fx->screen, qs_screen_free);
}

/* A client's link of (type, id) through the hub's callbacks; NULL when the
 * hub refuses it with `expect`. */
QsConn *link_to(Fixture *fx, guint8 type, guint8 id, SpiceLinkErr expect)
{
    const QsServerCallbacks *cb = qs_channels_server_callbacks();
    guint32 conn_id = type == SPICE_CHANNEL_MAIN ? 0 : fx->session_id;
    QsConn *conn = fake_conn_new(type, id, conn_id, 0);
    guint32 caps[QS_SERVER_MAX_CHANNEL_CAPS] = { 0 };
    guint n_caps = 0;
    guint32 sid = 0;
    SpiceLinkErr err = cb->prepare(qs_conn_get_link_info(conn), caps, &n_caps, fx->hub);

    if (err == SPICE_LINK_ERR_OK) {
        err = cb->authorize(qs_conn_get_link_info(conn), &sid, fx->hub);
    }
    g_assert_cmpint(err, ==, expect);
    if (err != SPICE_LINK_ERR_OK) {
        qs_conn_unref(conn);
        return NULL;
    }
    fake_conn_set_session_id(conn, sid);
    cb->attach(qs_conn_ref(conn), fx->hub);
    if (type == SPICE_CHANNEL_MAIN) {
        fx->session_id = sid;
    }
    return conn;
}

/* The i-th message sent on `conn`, which must be of `type`. */
const uint8_t *msg_at(QsConn *conn, guint i, guint16 type, gsize *size)
{
    GArray *sent = fake_conn_sent(conn);

    g_assert_cmpuint(i, <, sent->len);
    g_assert_cmpuint(g_array_index(sent, FakeMsg, i).type, ==, type);
    return g_bytes_get_data(g_array_index(sent, FakeMsg, i).payload, size);
}

/* The SPICEVMC_DATA bytes sent on `conn` so far, in order; other messages
 * are skipped. */
GByteArray *data_sent(QsConn *conn)
{
    GArray *sent = fake_conn_sent(conn);
    GByteArray *out = g_byte_array_new();

    for (guint i = 0; i < sent->len; i++) {
        FakeMsg *m = &g_array_index(sent, FakeMsg, i);
        gsize n;
        const guint8 *p = g_bytes_get_data(m->payload, &n);

        if (m->type == SPICE_MSG_SPICEVMC_DATA) {
            g_assert_cmpuint(n, <=, QS_VMC_MAX_DATA);
            g_byte_array_append(out, p, (guint)n);
        }
    }
    return out;
}

void check_port_init(QsConn *conn, guint i, const char *name, gboolean opened)
{
    gsize size;
    const uint8_t *p = msg_at(conn, i, SPICE_MSG_PORT_INIT, &size);

    g_assert_cmpuint(size, ==, 9 + strlen(name) + 1);
    g_assert_cmpuint(qs_wire_get_u32(p), ==, strlen(name) + 1);
    g_assert_cmpuint(qs_wire_get_u32(p + 4), ==, 9);
    g_assert_cmpuint(p[8], ==, opened);
    g_assert_cmpstr((const char *)p + 9, ==, name);
}

guint last_type(QsConn *conn)
{
    GArray *sent = fake_conn_sent(conn);

    return sent->len ? g_array_index(sent, FakeMsg, sent->len - 1).type : 0;
}

QsVmcBridge *bridge_on(int fd, const char *name, uint8_t type, uint8_t id)
{
    g_autoptr(GError) error = NULL;
    QsChardev *cd = qs_chardev_new(name, fd, &error);

    g_assert_no_error(error);
    return qs_vmc_bridge_new(cd, type, id);
}

/* A socketpair: [0] for the helper, [1] as qemu's end (non-blocking). */
void pair(int sv[2])
{
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
    g_assert_cmpint(fcntl(sv[1], F_SETFL, O_NONBLOCK), ==, 0);
}

/* Reads what qemu's end has now, up to `max`. */
GByteArray *qemu_read(int fd, gsize max)
{
    GByteArray *out = g_byte_array_new();
    guint8 buf[65536];

    while (out->len < max) {
        ssize_t n = read(fd, buf, MIN(sizeof(buf), max - out->len));

        if (n <= 0) {
            break;
        }
        g_byte_array_append(out, buf, (guint)n);
    }
    return out;
}

int listening_socket(char **path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    g_autofree char *dir = g_dir_make_tmp("qs-vmc-XXXXXX", NULL);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    g_assert_nonnull(dir);
    *path = g_build_filename(dir, "chardev.sock", NULL);
    g_strlcpy(sa.sun_path, *path, sizeof(sa.sun_path));
    g_assert_cmpint(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
    g_assert_cmpint(listen(fd, 4), ==, 0);
    return fd;
}

int qemu_connect(const char *path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    g_strlcpy(sa.sun_path, path, sizeof(sa.sun_path));
    g_assert_cmpint(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
    return fd;
}
