/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsChardev's refusals: descriptors that are not a stream socket, named in the error; a dialed chardev's dials (the bridge's tests drive the rest: tests/unit/channels/test-vmc.c). */
#include "net/qs-chardev.h"

#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void test_bad_descriptors(void)
{
    g_autoptr(GError) error = NULL;
    int p[2], d[2];

    g_assert_cmpint(pipe(p), ==, 0);
    g_assert_null(qs_chardev_new("org.x", p[0], &error));
    g_assert_nonnull(strstr(error->message, "not a socket"));
    g_assert_nonnull(strstr(error->message, "org.x"));
    g_clear_error(&error);
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_DGRAM, 0, d), ==, 0);
    g_assert_null(qs_chardev_new("org.y", d[0], &error));
    g_assert_nonnull(strstr(error->message, "not a stream socket"));
    g_clear_error(&error);
    g_assert_null(qs_chardev_new("org.z", 1000, &error));
    g_assert_nonnull(strstr(error->message, "1000"));
    close(p[0]);
    close(p[1]);
    close(d[0]);
    close(d[1]);
}

/* A connected socket is open at once; a listening one waits for qemu. */
static void test_modes(void)
{
    g_autoptr(GError) error = NULL;
    int sv[2], l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    QsChardev *cd;

    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
    cd = qs_chardev_new("org.a", sv[0], &error);
    g_assert_no_error(error);
    g_assert_true(qs_chardev_is_open(cd));
    g_assert_false(qs_chardev_is_listening(cd));
    g_assert_cmpstr(qs_chardev_get_name(cd), ==, "org.a");
    qs_chardev_free(cd);
    close(sv[1]);
    /* An address of just the family: Linux binds an unused abstract one. */
    g_assert_cmpint(bind(l, (struct sockaddr *)&(struct sockaddr_un){ .sun_family = AF_UNIX },
                         sizeof(sa_family_t)), ==, 0);
    g_assert_cmpint(listen(l, 1), ==, 0);
    cd = qs_chardev_new("org.b", l, &error);
    g_assert_no_error(error);
    g_assert_false(qs_chardev_is_open(cd));
    g_assert_true(qs_chardev_is_listening(cd));
    g_assert_false(qs_chardev_write(cd, (const guint8 *)"x", 1));
    qs_chardev_free(cd);
}

/* A dialer standing in for qemu's D-Bus chardev: each dial is answered
 * from the loop with one end of a fresh socket pair (or a failure), and
 * the test holds qemu's end. */
typedef struct {
    QsChardev *cd;
    guint dials;
    int fail;                   /* the next dials that fail */
    gboolean gone;              /* they fail for good */
    int qemu_end;
    gboolean released;
    guint opened, closed;
} Dialer;

static gboolean answer(gpointer data)
{
    Dialer *d = data;
    int sv[2];

    if (d->fail > 0) {
        d->fail--;
        qs_chardev_dial_failed(d->cd, "qemu said no", d->gone);
        return G_SOURCE_REMOVE;
    }
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
    if (d->qemu_end >= 0) {
        close(d->qemu_end);
    }
    d->qemu_end = sv[1];
    qs_chardev_dialed(d->cd, sv[0]);
    return G_SOURCE_REMOVE;
}

static void on_dial(QsChardev *cd, gpointer data)
{
    Dialer *d = data;

    g_assert_true(cd == d->cd);
    d->dials++;
    g_idle_add(answer, d);
}

static void on_release(gpointer data)
{
    ((Dialer *)data)->released = TRUE;
}

static void on_opened(QsChardev *cd, gpointer data)
{
    (void)cd;
    ((Dialer *)data)->opened++;
}

static void on_closed(QsChardev *cd, const char *reason, gboolean for_good, gpointer data)
{
    (void)cd, (void)reason;
    g_assert_false(for_good);
    ((Dialer *)data)->closed++;
}

static void run_for(guint ms)
{
    gint64 end = g_get_monotonic_time() + ms * 1000;

    while (g_get_monotonic_time() < end) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
}

/* Runs the loop until `*dials` reaches `want` (at most 5 s); returns the
 * milliseconds it took. */
static gint64 wait_dials(const guint *dials, guint want)
{
    gint64 start = g_get_monotonic_time();

    while (*dials < want && g_get_monotonic_time() - start < 5 * G_USEC_PER_SEC) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
    g_assert_cmpuint(*dials, ==, want);
    run_for(20);                /* its answer */
    return (g_get_monotonic_time() - start) / 1000;
}

/* Dials when it has no connection and accepts, again after the connection
 * ends, after a pause when qemu closed at once or a dial failed, never
 * after a failure for good, and never while not accepting. */
static void test_dialed(void)
{
    static const QsChardevDialer dialer = { on_dial, on_release };
    static const QsChardevHandlers handlers = { .opened = on_opened, .closed = on_closed };
    Dialer d = { .qemu_end = -1 };
    char c;

    d.cd = qs_chardev_new_dialed("org.d", &dialer, &d);
    qs_chardev_set_handlers(d.cd, &handlers, &d);
    g_assert_true(qs_chardev_is_listening(d.cd));
    g_assert_false(qs_chardev_is_open(d.cd));
    wait_dials(&d.dials, 1);
    g_assert_cmpuint(d.opened, ==, 1);
    g_assert_true(qs_chardev_is_open(d.cd));
    /* Bytes both ways on the dialed connection. */
    g_assert_true(qs_chardev_write(d.cd, (const guint8 *)"x", 1));
    run_for(20);
    g_assert_cmpint(read(d.qemu_end, &c, 1), ==, 1);
    g_assert_cmpint(c, ==, 'x');
    /* We end it: dialed again at once. */
    qs_chardev_disconnect(d.cd, "test");
    g_assert_cmpuint(d.closed, ==, 1);
    wait_dials(&d.dials, 2);
    g_assert_true(qs_chardev_is_open(d.cd));
    /* qemu ends it at once: the next dial waits a second. */
    qs_chardev_set_reading(d.cd, TRUE);
    close(d.qemu_end);
    d.qemu_end = -1;
    run_for(300);
    g_assert_cmpuint(d.closed, ==, 2);
    g_assert_cmpuint(d.dials, ==, 2);
    g_assert_cmpint(wait_dials(&d.dials, 3), >=, 600);
    g_assert_true(qs_chardev_is_open(d.cd));
    /* Not accepting: no dial after the connection ends. */
    qs_chardev_set_accepting(d.cd, FALSE);
    qs_chardev_disconnect(d.cd, "test");
    run_for(100);
    g_assert_cmpuint(d.dials, ==, 3);
    /* Failures: retried after a pause, 100 ms then 200 ms. */
    d.fail = 2;
    qs_chardev_set_accepting(d.cd, TRUE);
    wait_dials(&d.dials, 4);
    g_assert_false(qs_chardev_is_open(d.cd));
    g_assert_cmpint(wait_dials(&d.dials, 6), >=, 250);
    g_assert_true(qs_chardev_is_open(d.cd));
    /* Gone for good: no more dials. */
    d.fail = 1;
    d.gone = TRUE;
    qs_chardev_disconnect(d.cd, "test");
    wait_dials(&d.dials, 7);
    run_for(300);
    g_assert_cmpuint(d.dials, ==, 7);
    g_assert_false(qs_chardev_is_open(d.cd));
    g_assert_false(d.released);
    qs_chardev_free(d.cd);
    g_assert_true(d.released);
    close(d.qemu_end);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/net/chardev/bad-descriptors", test_bad_descriptors);
    g_test_add_func("/net/chardev/modes", test_modes);
    g_test_add_func("/net/chardev/dialed", test_dialed);
    return g_test_run();
}
