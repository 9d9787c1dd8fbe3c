/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Test builds: --test-confine-probe tries what confinement forbids, once serving, and logs the answer. */
#include "qs-confine-probe.h"

#ifdef QS_TEST_CONTROLS
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

static const char *errno_name(int e)
{
    return e == EPERM ? "EPERM" : e == EACCES ? "EACCES" :
           e == ENOENT ? "ENOENT" : e == ENOSYS ? "ENOSYS" : "other";
}

static void probe_result(const char *what, int r)
{
    int e = errno;

    if (r < 0) {
        g_message("confine-probe %s: refused %s (%s)", what, errno_name(e),
                  g_strerror(e));
    } else {
        g_message("confine-probe %s: ALLOWED", what);
    }
}

typedef struct {
    char *what;
    int sock;
} Probe;

static void probe_free(gpointer data)
{
    Probe *p = data;

    g_free(p->what);
    g_free(p);
}

static gboolean run_probe(gpointer data)
{
    Probe *p = data;

    if (g_str_equal(p->what, "open")) {
        int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);

        probe_result("open /etc/passwd", fd);
        if (fd >= 0) {
            close(fd);
        }
    } else if (g_str_equal(p->what, "connect")) {
        struct sockaddr_in sin = { .sin_family = AF_INET,
                                   .sin_port = htons(9),
                                   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        probe_result("socket AF_INET", fd);
        if (fd >= 0) {
            close(fd);
        }
        probe_result("connect 127.0.0.1:9",
                     connect(p->sock, (struct sockaddr *)&sin,
                             sizeof(sin)));
    } else {
        char *argv[] = { (char *)"/bin/true", NULL };
        char *envp[] = { NULL };

        g_message("confine-probe exec: trying /bin/true");
        probe_result("exec /bin/true", execve(argv[0], argv, envp));
    }
    return G_SOURCE_REMOVE;
}

void qs_confine_probe_start(const char *what, int sock)
{
    Probe *p = g_new0(Probe, 1);

    p->what = g_strdup(what);
    p->sock = sock;
    g_idle_add_full(G_PRIORITY_DEFAULT_IDLE, run_probe, p, probe_free);
}
#endif
