/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Confinement in a forked child holding the helper's kinds of resources. */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stddef.h>
#include <sys/un.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <gio/gio.h>
#include <gnutls/gnutls.h>

#include "qs-confine.h"
#include "qs-user-lookup.h"

/* What the child tells the parent, one byte per check, over `report`. */
enum { CHILD_READY = 'R', CHILD_DONE = 'D' };

typedef struct {
    int report;              /* child -> parent */
    int go;                  /* parent -> child */
    GDBusConnection *client; /* p2p pair inside the child */
    GDBusConnection *server;
    int pair[2];             /* an inherited socketpair */
    int memfd;
    gnutls_psk_server_credentials_t psk_srv;
    gnutls_psk_client_credentials_t psk_cli;
    gnutls_priority_t prio;
} Child;

static const char *user_for_tests(void)
{
    return g_getenv("QS_CONFINE_TEST_USER") ? g_getenv("QS_CONFINE_TEST_USER")
                                           : "nobody";
}

static gpointer dbus_server_thread(gpointer data)
{
    GSocketConnection *stream = data;
    g_autofree char *guid = g_dbus_generate_guid();

    return g_dbus_connection_new_sync(G_IO_STREAM(stream), guid,
                                      G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_SERVER,
                                      NULL, NULL, NULL);
}

static GSocketConnection *stream_for(int fd)
{
    g_autoptr(GSocket) sock = g_socket_new_from_fd(fd, NULL);

    g_assert_nonnull(sock);
    return g_socket_connection_factory_create_connection(sock);
}

/* Sets up what the helper holds at start-up: a GDBus p2p connection with
 * its worker thread, gnutls credentials, a memfd, a socketpair. */
static void child_setup(Child *c)
{
    int dbus[2];
    g_autoptr(GSocketConnection) cs = NULL;
    g_autoptr(GSocketConnection) ss = NULL;
    GThread *t;
    const gnutls_datum_t key = { (unsigned char *)"0123456789abcdef", 16 };

    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, dbus),
                    ==, 0);
    cs = stream_for(dbus[0]);
    ss = stream_for(dbus[1]);
    t = g_thread_new("dbus-server", dbus_server_thread, ss);
    c->client = g_dbus_connection_new_sync(G_IO_STREAM(cs), NULL,
                    G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT,
                    NULL, NULL, NULL);
    c->server = g_thread_join(t);
    g_assert_nonnull(c->client);
    g_assert_nonnull(c->server);

    g_assert_cmpint(gnutls_global_init(), ==, 0);
    g_assert_cmpint(gnutls_psk_allocate_server_credentials(&c->psk_srv), ==, 0);
    g_assert_cmpint(gnutls_psk_allocate_client_credentials(&c->psk_cli), ==, 0);
    g_assert_cmpint(gnutls_psk_set_client_credentials(c->psk_cli, "qs", &key,
                                                      GNUTLS_PSK_KEY_RAW), ==, 0);
    g_assert_cmpint(gnutls_priority_init(&c->prio,
                        "NORMAL:-KX-ALL:+ECDHE-PSK:+PSK", NULL), ==, 0);

    c->memfd = memfd_create("qs-surface", MFD_CLOEXEC);
    g_assert_cmpint(c->memfd, >=, 0);
    g_assert_cmpint(ftruncate(c->memfd, 1 << 20), ==, 0);
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
                               c->pair), ==, 0);
}

static int psk_lookup(gnutls_session_t s, const char *user,
                      gnutls_datum_t *key)
{
    (void)s;
    if (!g_str_equal(user, "qs")) {
        return -1;
    }
    key->data = gnutls_malloc(16);
    memcpy(key->data, "0123456789abcdef", 16);
    key->size = 16;
    return 0;
}

typedef struct {
    Child *c;
    int fd;
    gboolean server;
    int result;
} Tls;

static gpointer tls_side(gpointer data)
{
    Tls *t = data;
    gnutls_session_t s;
    char buf[8] = "";
    int r;

    gnutls_init(&s, t->server ? GNUTLS_SERVER : GNUTLS_CLIENT);
    gnutls_priority_set(s, t->c->prio);
    if (t->server) {
        gnutls_psk_set_server_credentials_function(t->c->psk_srv, psk_lookup);
        gnutls_credentials_set(s, GNUTLS_CRD_PSK, t->c->psk_srv);
    } else {
        gnutls_credentials_set(s, GNUTLS_CRD_PSK, t->c->psk_cli);
    }
    gnutls_transport_set_int(s, t->fd);
    do {
        r = gnutls_handshake(s);
    } while (r < 0 && !gnutls_error_is_fatal(r));
    if (r == 0 && t->server) {
        r = gnutls_record_send(s, "hello", 5) == 5 ? 0 : -1;
    } else if (r == 0) {
        r = (gnutls_record_recv(s, buf, sizeof(buf)) == 5 &&
             memcmp(buf, "hello", 5) == 0) ? 0 : -1;
    }
    gnutls_deinit(s);
    t->result = r;
    return NULL;
}

static gpointer thread_noop(gpointer data)
{
    return data;
}

/* Checks that must still work once confined; each failure exits 10+n. */
static int child_checks(Child *c)
{
    int sv[2];
    g_autoptr(GVariant) reply = NULL;
    g_autoptr(GError) error = NULL;
    struct rlimit rl;
    uint8_t *map;
    char b = 0;
    int tls_fds[2];
    Tls ts, tc;
    GThread *t1, *t2;

    if (g_thread_join(g_thread_new("after", thread_noop, c)) != c) {
        return 11;
    }
    map = mmap(NULL, 1 << 20, PROT_READ, MAP_SHARED, c->memfd, 0);
    if (map == MAP_FAILED || map[4096] != 0) {
        return 12;
    }
    munmap(map, 1 << 20);
    if (write(c->pair[0], "x", 1) != 1 || read(c->pair[1], &b, 1) != 1 ||
        b != 'x') {
        return 13;
    }
    reply = g_dbus_connection_call_sync(c->client, NULL, "/",
                                        "org.freedesktop.DBus.Peer", "Ping",
                                        NULL, NULL, G_DBUS_CALL_FLAGS_NONE,
                                        5000, NULL, &error);
    if (!reply) {
        fprintf(stderr, "ping: %s\n", error->message);
        return 14;
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur != 64 ||
        rl.rlim_max != 64) {
        return 15;
    }
    if (getrlimit(RLIMIT_AS, &rl) < 0) {
        return 16;
    }
#if !defined(__SANITIZE_ADDRESS__)
    if (rl.rlim_max != (rlim_t)4096 << 20) {
        return 16;
    }
#endif
    if (open("/etc/passwd", O_RDONLY | O_CLOEXEC) >= 0) {
        return 17;
    }
    errno = 0;
    if (socket(AF_INET, SOCK_STREAM, 0) >= 0 || errno != EPERM) {
        return 18;
    }
    /* AF_UNIX pairs stay possible (listener re-registration), others are
     * refused by the filter (EPERM), not by the kernel (EOPNOTSUPP). */
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        return 19;
    }
    close(sv[0]);
    close(sv[1]);
    errno = 0;
    if (socketpair(AF_INET, SOCK_STREAM, 0, sv) >= 0 || errno != EPERM) {
        return 19;
    }
    if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
             -1, 0) != MAP_FAILED) {
        return 20;
    }
    /* signals: to ourselves yes (raise), to another process no */
    signal(SIGUSR2, SIG_IGN);
    if (raise(SIGUSR2) != 0) {
        return 22;
    }
    /* gnutls handshake between two new threads over a pre-made pair */
    tls_fds[0] = c->pair[0];
    tls_fds[1] = c->pair[1];
    ts = (Tls){ c, tls_fds[0], TRUE, -1 };
    tc = (Tls){ c, tls_fds[1], FALSE, -1 };
    t1 = g_thread_new("tls-s", tls_side, &ts);
    t2 = g_thread_new("tls-c", tls_side, &tc);
    g_thread_join(t1);
    g_thread_join(t2);
    if (ts.result != 0 || tc.result != 0) {
        fprintf(stderr, "tls: %s / %s\n", gnutls_strerror(ts.result),
                gnutls_strerror(tc.result));
        return 21;
    }
    return 0;
}

typedef enum { ACT_CHECKS, ACT_EXEC, ACT_FORK, ACT_SETUID, ACT_KILL } Action;

/* Forks a confined child; returns its pid, `report`/`go` pipes open. */
static pid_t spawn(Action act, const char *steps, int *report, int *go)
{
    int rp[2], gp[2];
    pid_t pid;

    g_assert_cmpint(pipe2(rp, O_CLOEXEC), ==, 0);
    g_assert_cmpint(pipe2(gp, O_CLOEXEC), ==, 0);
    pid = fork();
    g_assert_cmpint(pid, >=, 0);
    if (pid == 0) {
        Child c = { .report = rp[1], .go = gp[0] };
        QsConfineConfig cfg;
        g_autoptr(GError) error = NULL;
        char byte = CHILD_READY;
        int status;

        close(rp[0]);
        close(gp[1]);
        /* the "OFF: ..." line is a warning, fatal under gtest */
        g_log_set_always_fatal(G_LOG_LEVEL_ERROR);
        qs_confine_config_init(&cfg);
        cfg.steps = g_strdup(steps);
        cfg.user = getuid() == 0 ? g_strdup(user_for_tests()) : NULL;
        cfg.max_files = 64;
        cfg.max_as_mib = 4096;
        if (!qs_confine_prepare(&cfg, FALSE, &error)) {
            fprintf(stderr, "prepare: %s\n", error->message);
            _exit(2);
        }
        child_setup(&c);
        if (!qs_confine_apply(&cfg, &error)) {
            fprintf(stderr, "apply: %s\n", error->message);
            _exit(3);
        }
        /* The parent reads /proc/PID while we wait. */
        if (write(c.report, &byte, 1) != 1 || read(c.go, &byte, 1) != 1) {
            _exit(4);
        }
        switch (act) {
        case ACT_CHECKS:
            status = child_checks(&c);
            break;
        case ACT_EXEC: {
            char *argv[] = { (char *)"/bin/true", NULL };

            execv(argv[0], argv);
            status = errno == EPERM || errno == EACCES ? 0 : 30;
            break;
        }
        case ACT_FORK:
            status = fork() < 0 ? 0 : 31;
            break;
        case ACT_SETUID:
            status = setuid(0) < 0 ? 0 : 32;
            break;
        case ACT_KILL:      /* our parent, by tgkill() (allowed for
                             * ourselves only), then by kill() */
            status = syscall(SYS_tgkill, getppid(), getppid(), 0) < 0 ? 0 : 34;
            if (status == 0) {
                status = kill(getppid(), 0) < 0 ? 0 : 33;
            }
            break;
        default:
            status = 99;
        }
        _exit(status);
    }
    close(rp[1]);
    close(gp[0]);
    *report = rp[0];
    *go = gp[1];
    return pid;
}

static int wait_child(pid_t pid)
{
    int status;

    g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
    return status;
}

static char *status_field(const char *status, const char *name)
{
    g_autofree char *key = g_strdup_printf("\n%s:", name);
    const char *p = strstr(status, key);
    const char *end;

    g_assert_nonnull(p);
    p += strlen(key);
    p += strspn(p, " \t");
    end = strchr(p, '\n');
    return g_strndup(p, end ? (size_t)(end - p) : strlen(p));
}

static void assert_confined_status(const char *path)
{
    g_autofree char *text = NULL;
    g_autofree char *uid = NULL;

    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    g_autofree char *nnp = status_field(text, "NoNewPrivs");
    g_autofree char *sec = status_field(text, "Seccomp");
    g_autofree char *eff = status_field(text, "CapEff");
    g_autofree char *prm = status_field(text, "CapPrm");
    g_autofree char *bnd = status_field(text, "CapBnd");
    g_autofree char *amb = status_field(text, "CapAmb");

    g_assert_cmpstr(nnp, ==, "1");
    g_assert_cmpstr(sec, ==, "2");
    g_assert_cmpstr(eff, ==, "0000000000000000");
    g_assert_cmpstr(prm, ==, "0000000000000000");
    g_assert_cmpstr(amb, ==, "0000000000000000");
    if (getuid() == 0) {
        /* emptying the bounding set needs CAP_SETPCAP */
        g_assert_cmpstr(bnd, ==, "0000000000000000");
        uid = status_field(text, "Uid");
        g_assert_false(g_str_has_prefix(uid, "0\t"));
        g_assert_false(strstr(uid, "\t0"));
        g_autofree char *gid = status_field(text, "Gid");
        g_autofree char *groups = status_field(text, "Groups");

        g_assert_false(g_str_has_prefix(gid, "0\t"));
        g_assert_cmpstr(groups, ==, "");
    }
}

static void test_status_and_checks(void)
{
    int report, go;
    char byte = 0;
    pid_t pid = spawn(ACT_CHECKS, "all", &report, &go);
    g_autofree char *path = g_strdup_printf("/proc/%d/status", pid);
    g_autofree char *taskdir = g_strdup_printf("/proc/%d/task", pid);
    g_autoptr(GDir) dir = NULL;
    const char *tid;
    int status;

    g_assert_cmpint(read(report, &byte, 1), ==, 1);
    g_assert_cmpint(byte, ==, CHILD_READY);
    assert_confined_status(path);
    /* every thread, including GDBus's worker */
    dir = g_dir_open(taskdir, 0, NULL);
    g_assert_nonnull(dir);
    while ((tid = g_dir_read_name(dir))) {
        g_autofree char *tpath = g_strdup_printf("%s/%s/status", taskdir, tid);

        assert_confined_status(tpath);
    }
    g_assert_cmpint(write(go, "g", 1), ==, 1);
    status = wait_child(pid);
    if (WIFSIGNALED(status)) {
        g_error("confined child killed by signal %d", WTERMSIG(status));
    }
    g_assert_cmpint(WEXITSTATUS(status), ==, 0);
    close(report);
    close(go);
}

static void expect_refused_or_killed(Action act)
{
    int report, go;
    char byte = 0;
    pid_t pid = spawn(act, "all", &report, &go);
    int status;

    g_assert_cmpint(read(report, &byte, 1), ==, 1);
    g_assert_cmpint(write(go, "g", 1), ==, 1);
    status = wait_child(pid);
    if (WIFSIGNALED(status)) {
        g_assert_cmpint(WTERMSIG(status), ==, SIGSYS);
        g_test_message("killed by SIGSYS");
    } else {
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
        g_test_message("refused");
    }
    close(report);
    close(go);
}

static void test_exec(void)
{
    expect_refused_or_killed(ACT_EXEC);
}

static void test_fork(void)
{
    expect_refused_or_killed(ACT_FORK);
}

static void test_setuid(void)
{
    expect_refused_or_killed(ACT_SETUID);
}

static void test_kill_other(void)
{
    expect_refused_or_killed(ACT_KILL);
}

static void test_no_seccomp(void)
{
    int report, go;
    char byte = 0;
    pid_t pid = spawn(ACT_EXEC, "all,-seccomp", &report, &go);
    g_autofree char *path = g_strdup_printf("/proc/%d/status", pid);
    g_autofree char *text = NULL;
    int status;

    g_assert_cmpint(read(report, &byte, 1), ==, 1);
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    g_autofree char *sec = status_field(text, "Seccomp");
    g_assert_cmpstr(sec, ==, "0");
    g_assert_cmpint(write(go, "g", 1), ==, 1);
    status = wait_child(pid);
    /* Not killed: exec fails only because the root is an empty directory
     * the new uid cannot even search (EACCES), or, not root, runs. */
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 0);
    close(report);
    close(go);
}

/* A per-VM bus authenticates by uid: after qs_confine_prepare(bus_peer)
 * a connect must carry the user's uid, and apply must still finish. */
static void test_bus_identity(void)
{
    struct sockaddr_un sun = { .sun_family = AF_UNIX };
    g_autofree char *name = g_strdup_printf("qs-confine-test-%d", getpid());
    socklen_t len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
    struct ucred cred;
    socklen_t clen = sizeof(cred);
    int lfd, cfd, status;
    pid_t pid;
    char byte = 0;
    g_autofree char *path = NULL;
    g_autofree char *text = NULL;
    g_autofree char *uids = NULL;
    g_autofree char *expect = NULL;

    if (getuid() != 0) {
        g_test_skip("needs root");
        return;
    }
    memcpy(sun.sun_path + 1, name, strlen(name));   /* abstract */
    lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    g_assert_cmpint(bind(lfd, (struct sockaddr *)&sun, len), ==, 0);
    g_assert_cmpint(listen(lfd, 1), ==, 0);
    pid = fork();
    g_assert_cmpint(pid, >=, 0);
    if (pid == 0) {
        QsConfineConfig cfg;
        g_autoptr(GError) error = NULL;
        struct passwd *pw = getpwnam(user_for_tests());
        int fd;

        g_log_set_always_fatal(G_LOG_LEVEL_ERROR);
        qs_confine_config_init(&cfg);
        cfg.user = g_strdup(user_for_tests());
        if (!pw || !qs_confine_prepare(&cfg, TRUE, &error)) {
            _exit(2);
        }
        if (getuid() != pw->pw_uid || geteuid() != pw->pw_uid ||
            getgid() != pw->pw_gid) {
            _exit(3);
        }
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (connect(fd, (struct sockaddr *)&sun, len) < 0) {
            _exit(4);
        }
        /* root again for the rest of the start-up */
        if (!qs_confine_end_bus_identity(&cfg, &error) || geteuid() != 0 ||
            getegid() != 0) {
            _exit(8);
        }
        if (!qs_confine_apply(&cfg, &error)) {
            fprintf(stderr, "apply: %s\n", error->message);
            _exit(5);
        }
        char b;

        if (qs_confine_active() != QS_CONFINE_ALL) {
            _exit(6);
        }
        /* the parent checks all three uids in /proc meanwhile */
        _exit(write(fd, "k", 1) == 1 && read(fd, &b, 1) == 1 ? 0 : 7);
    }
    path = g_strdup_printf("/proc/%d/status", pid);
    cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    g_assert_cmpint(cfd, >=, 0);
    g_assert_cmpint(getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &clen),
                    ==, 0);
    g_assert_cmpuint(cred.uid, ==, getpwnam(user_for_tests())->pw_uid);
    g_assert_cmpint(read(cfd, &byte, 1), ==, 1);
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    uids = status_field(text, "Uid");
    expect = g_strdup_printf("%u\t%u\t%u\t%u", cred.uid, cred.uid, cred.uid,
                             cred.uid);
    g_assert_cmpstr(uids, ==, expect);
    g_assert_cmpint(write(cfd, "g", 1), ==, 1);
    status = wait_child(pid);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 0);
    close(cfd);
    close(lfd);
}

static void test_parse(void)
{
    guint m = 0;
    g_autoptr(GError) error = NULL;

    g_assert_true(qs_confine_parse_steps(NULL, &m, NULL));
    g_assert_cmpuint(m, ==, QS_CONFINE_ALL);
    g_assert_true(qs_confine_parse_steps("all,-seccomp,-netns", &m, NULL));
    g_assert_cmpuint(m, ==, QS_CONFINE_ALL & ~(guint)(QS_CONFINE_SECCOMP |
                                                     QS_CONFINE_NETNS));
    g_assert_true(qs_confine_parse_steps("none", &m, NULL));
    g_assert_cmpuint(m, ==, 0);
    g_assert_true(qs_confine_parse_steps("nnp,seccomp", &m, NULL));
    g_assert_cmpuint(m, ==, QS_CONFINE_NNP | QS_CONFINE_SECCOMP);
    g_assert_false(qs_confine_parse_steps("all,-bogus", &m, &error));
    g_assert_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE);
}

/* The lookup runs in a child: the answer comes back whole, an unknown
 * name is "no such user" (no error), and no NSS module is mapped here. */
static void test_user_lookup(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *maps = NULL;
    QsUserEntry e;
    struct passwd *pw;

    g_assert_true(qs_user_lookup("root", &e, &error));
    g_assert_no_error(error);
    g_assert_cmpuint(e.uid, ==, 0);
    g_assert_cmpuint(e.gid, ==, 0);
    g_assert_cmpstr(e.name, ==, "root");
    g_assert_false(qs_user_lookup("qs-no-such-user-7f3a", &e, &error));
    g_assert_no_error(error);
    g_assert_true(g_file_get_contents("/proc/self/maps", &maps, NULL, NULL));
    g_assert_null(strstr(maps, "libnss_"));
    /* The same answer as getpwnam here (which loads the modules). */
    pw = getpwnam(user_for_tests());
    g_assert_nonnull(pw);
    g_assert_true(qs_user_lookup(user_for_tests(), &e, &error));
    g_assert_cmpuint(e.uid, ==, pw->pw_uid);
    g_assert_cmpuint(e.gid, ==, pw->pw_gid);
}

/* An unknown --user is a usage error naming it. */
static void test_unknown_user(void)
{
    QsConfineConfig cfg;
    g_autoptr(GError) error = NULL;

    if (geteuid() != 0) {
        g_test_skip("the user step is resolved only as root");
        return;
    }
    qs_confine_config_init(&cfg);
    cfg.user = g_strdup("qs-no-such-user-7f3a");
    g_assert_false(qs_confine_prepare(&cfg, FALSE, &error));
    g_assert_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE);
    g_assert_nonnull(strstr(error->message, "--user: no user 'qs-no-such-user-7f3a'"));
    qs_confine_config_clear(&cfg);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/confine/user-lookup", test_user_lookup);
    g_test_add_func("/confine/unknown-user", test_unknown_user);
    g_test_add_func("/confine/parse", test_parse);
    g_test_add_func("/confine/status-and-checks", test_status_and_checks);
    g_test_add_func("/confine/exec", test_exec);
    g_test_add_func("/confine/fork", test_fork);
    g_test_add_func("/confine/setuid", test_setuid);
    g_test_add_func("/confine/kill-other", test_kill_other);
    g_test_add_func("/confine/no-seccomp", test_no_seccomp);
    g_test_add_func("/confine/bus-identity", test_bus_identity);
    return g_test_run();
}
