/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The stream's main-loop watch: a newly wanted G_IO_OUT gets one try
 * without poll(), a socket still full after it is watched for room (no
 * stall, no spin), and reads are reported as before. */

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/socket.h>
#include "net/qs-stream.h"

typedef struct {
    QsStream *stream;
    int peer;               /* the other end of the socket pair */
    guint calls;
    GIOCondition seen;      /* every condition reported so far */
    gboolean blocked;       /* the last write would have blocked */
} Fixture;

static void fill(int fd)
{
    static const char junk[4096];

    while (write(fd, junk, sizeof(junk)) > 0) {
    }
    g_assert_cmpint(errno, ==, EAGAIN);
}

static void drain(int fd)
{
    char buf[4096];

    while (read(fd, buf, sizeof(buf)) > 0) {
    }
}

/* A sender with one byte to write: its G_IO_OUT stays asked for (it does
 * not ask again) until the byte is out. */
static void on_io(QsStream *stream, GIOCondition cond, gpointer data)
{
    Fixture *f = data;

    f->calls++;
    f->seen |= cond;
    if (cond & G_IO_OUT) {
        f->blocked = write(qs_stream_get_fd(stream), "x", 1) != 1;
        if (!f->blocked) {
            qs_stream_set_condition(stream, G_IO_IN);
        }
    }
}

static void setup(Fixture *f, gconstpointer unused)
{
    int sv[2];
    g_autoptr(GError) error = NULL;

    (void)unused;
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                               0, sv), ==, 0);
    f->stream = qs_stream_new(sv[0], NULL, "test", &error);
    g_assert_no_error(error);
    f->peer = sv[1];
    qs_stream_watch(f->stream, G_IO_IN, on_io, f);
}

static void teardown(Fixture *f, gconstpointer unused)
{
    (void)unused;
    qs_stream_free(f->stream);
    close(f->peer);
    while (g_main_context_iteration(NULL, FALSE)) {
    }
}

/* Runs every iteration that is ready now; returns how many dispatched. */
static guint run_ready(void)
{
    guint n = 0;

    while (n < 100 && g_main_context_iteration(NULL, FALSE)) {
        n++;
    }
    return n;
}

static gboolean on_timeout(gpointer data)
{
    *(gboolean *)data = TRUE;
    return G_SOURCE_REMOVE;
}

static void test_out_tried_at_once(Fixture *f, gconstpointer unused)
{
    char c;

    (void)unused;
    qs_stream_set_condition(f->stream, G_IO_IN | G_IO_OUT);
    run_ready();
    g_assert_cmpuint(f->calls, ==, 1);
    g_assert_true(f->seen & G_IO_OUT);
    g_assert_false(f->blocked);
    g_assert_cmpint(read(f->peer, &c, 1), ==, 1);
    /* Done writing: nothing more to report. */
    g_assert_cmpuint(run_ready(), ==, 0);
    g_assert_cmpuint(f->calls, ==, 1);
}

static void test_full_socket_waits_for_room(Fixture *f, gconstpointer unused)
{
    gboolean timed_out = FALSE;
    guint timeout;

    (void)unused;
    fill(qs_stream_get_fd(f->stream));
    qs_stream_set_condition(f->stream, G_IO_IN | G_IO_OUT);
    /* The free try comes although the socket is full; it finds it full. */
    run_ready();
    g_assert_cmpuint(f->calls, ==, 1);
    g_assert_true(f->blocked);
    /* No spin while the socket stays full. */
    g_assert_cmpuint(run_ready(), ==, 0);
    g_assert_cmpuint(f->calls, ==, 1);
    /* Room wakes poll(), within a bound. */
    drain(f->peer);
    timeout = g_timeout_add(5000, on_timeout, &timed_out);
    while (f->calls == 1 && !timed_out) {
        g_main_context_iteration(NULL, TRUE);
    }
    if (!timed_out) {
        g_source_remove(timeout);
    }
    g_assert_false(timed_out);
    g_assert_cmpuint(f->calls, ==, 2);
    g_assert_false(f->blocked);
}

static void test_reads_reported(Fixture *f, gconstpointer unused)
{
    (void)unused;
    g_assert_cmpint(write(f->peer, "y", 1), ==, 1);
    g_assert_cmpuint(run_ready(), >=, 1);
    g_assert_true(f->seen & G_IO_IN);
    g_assert_false(f->seen & G_IO_OUT);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add("/net/stream-watch/out-tried-at-once", Fixture, NULL, setup,
               test_out_tried_at_once, teardown);
    g_test_add("/net/stream-watch/full-socket-waits-for-room", Fixture, NULL,
               setup, test_full_socket_waits_for_room, teardown);
    g_test_add("/net/stream-watch/reads-reported", Fixture, NULL, setup,
               test_reads_reported, teardown);
    return g_test_run();
}
