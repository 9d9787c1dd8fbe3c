/* SPDX-License-Identifier: GPL-2.0-or-later */
/* getpwnam in a child process, its answer back through a pipe. */
#include "qs-user-lookup.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <gio/gio.h>

/* What the child writes: found or not, and the entry. */
typedef struct {
    gboolean found;
    QsUserEntry entry;
} Answer;

static void child(const char *name, int fd)
{
    Answer a = { 0 };
    struct passwd *pw = getpwnam(name);

    if (pw && strlen(pw->pw_name) < sizeof(a.entry.name)) {
        a.found = TRUE;
        a.entry.uid = pw->pw_uid;
        a.entry.gid = pw->pw_gid;
        memcpy(a.entry.name, pw->pw_name, strlen(pw->pw_name) + 1);
    }
    _exit(write(fd, &a, sizeof(a)) == (ssize_t)sizeof(a) ? 0 : 1);
}

static gboolean set_errno_error(GError **error, const char *what, int e)
{
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e),
                "looking up a user: %s: %s", what, g_strerror(e));
    return FALSE;
}

gboolean qs_user_lookup(const char *name, QsUserEntry *entry, GError **error)
{
    Answer a = { 0 };
    int fds[2];
    ssize_t n;
    int status = 0;
    pid_t pid;

    if (pipe2(fds, O_CLOEXEC) < 0) {
        return set_errno_error(error, "pipe", errno);
    }
    pid = fork();
    if (pid < 0) {
        int e = errno;

        close(fds[0]);
        close(fds[1]);
        return set_errno_error(error, "fork", e);
    }
    if (pid == 0) {
        close(fds[0]);
        child(name, fds[1]);
    }
    close(fds[1]);
    do {
        n = read(fds[0], &a, sizeof(a));
    } while (n < 0 && errno == EINTR);
    close(fds[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (n != (ssize_t)sizeof(a) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "looking up user '%s': the lookup process failed", name);
        return FALSE;
    }
    if (!a.found) {
        return FALSE;
    }
    *entry = a.entry;
    return TRUE;
}
