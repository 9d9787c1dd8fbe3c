/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Binds, makes secrets and execs the helper: the helper gets descriptors,
 * never the rights to bind ports or read secret files itself. */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pwd.h>
#include <gio/gio.h>
#include "qs-launch-spawn.h"

#define FD_DISPLAY 3
#define FD_LISTEN 4
#define FD_TLS_LISTEN 5
#define FD_TICKET 6
#define FD_CONTROL 7
#define FD_EXEC_ERR 8
#define FD_PORT0 9
#define N_FDS (6 + QS_SPAWN_MAX_CHARDEVS)

/* One listening socket on addr:port, or -1 with the errno in *err (0 with
 * `error` set when the address cannot be made). */
static int bind_one(int family, GInetAddress *ia, guint port, int *err,
                    GError **error)
{
    g_autoptr(GSocketAddress) sa = g_inet_socket_address_new(ia, (guint16)port);
    struct sockaddr_storage ss;
    int one = 1;
    int fd;

    *err = 0;
    if (!g_socket_address_to_native(sa, &ss, sizeof(ss), error)) {
        return -1;
    }
    fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *err = errno;
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&ss,
             (socklen_t)g_socket_address_get_native_size(sa)) == 0 &&
        listen(fd, 64) == 0) {
        return fd;
    }
    *err = errno;
    close(fd);
    return -1;
}

int qs_bind_listener(const char *addr, guint min, guint max, guint *port,
                     GError **error)
{
    g_autoptr(GInetAddress) ia = g_inet_address_new_from_string(addr);
    guint in_use = 0, refused = 0;
    int family;

    if (!ia) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "'%s' is not a numeric address", addr);
        return -1;
    }
    family = g_inet_address_get_family(ia) == G_SOCKET_FAMILY_IPV6 ? AF_INET6
                                                                   : AF_INET;
    for (guint p = min; p <= max; p++) {
        GError *local = NULL;
        int err;
        int fd = bind_one(family, ia, p, &err, &local);

        if (fd >= 0) {
            *port = p;
            return fd;
        }
        if (local) {
            g_propagate_error(error, local);
            return -1;
        }
        /* Refused: a privileged port without CAP_NET_BIND_SERVICE, or one a
         * security policy keeps for another service. The next may do. */
        if (err == EADDRINUSE) {
            in_use++;
        } else if (err == EACCES) {
            refused++;
        } else {
            g_set_error(error, G_IO_ERROR, g_io_error_from_errno(err),
                        "cannot listen on %s:%u: %s", addr, p, g_strerror(err));
            return -1;
        }
    }
    g_set_error(error, G_IO_ERROR,
                in_use ? G_IO_ERROR_ADDRESS_IN_USE : G_IO_ERROR_PERMISSION_DENIED,
                "no free port in %u-%u on %s ([listen] ports): %u in use, "
                "%u refused (%s)", min, max, addr, in_use, refused,
                g_strerror(EACCES));
    return -1;
}

char *qs_ticket_generate(GError **error)
{
    guint8 raw[24];
    char *b64;

    if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                    "getrandom: %s", g_strerror(errno));
        return NULL;
    }
    b64 = g_base64_encode(raw, sizeof(raw));
    explicit_bzero(raw, sizeof(raw));
    return b64;
}

char *qs_ticket_read_file(const char *path, gint64 *expiry, GError **error)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    g_auto(GStrv) lines = NULL;
    char *pw;

    if (!g_file_get_contents(path, &text, &len, error)) {
        return NULL;
    }
    lines = g_strsplit(text, "\n", -1);
    explicit_bzero(text, len);
    pw = g_strdup(g_strchomp(lines[0]));
    for (guint i = 1; lines[i]; i++) {
        const char *l = g_strchomp(lines[i]);
        gint64 v = 0;

        if (g_str_has_prefix(l, "expiry=@") &&
            g_ascii_string_to_signed(l + 8, 10, 1, G_MAXINT64, &v, NULL)) {
            *expiry = v;
        } else if (strcmp(l, "expiry=never") == 0) {
            *expiry = 0;
        }
    }
    explicit_bzero(lines[0], strlen(lines[0]));
    if (!*pw || strlen(pw) > 60) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "%s: the first line must be a password of 1 to 60 bytes",
                    path);
        g_free(pw);
        return NULL;
    }
    return pw;
}

static char *ticket_text(const char *password, gint64 expiry)
{
    if (expiry) {
        return g_strdup_printf("%s\nexpiry=@%" G_GINT64_FORMAT "\n", password,
                               expiry);
    }
    return g_strdup_printf("%s\nexpiry=never\n", password);
}

gboolean qs_ticket_write_file(const char *path, const char *password,
                              gint64 expiry, GError **error)
{
    g_autofree char *text = ticket_text(password, expiry);
    gboolean ok = g_file_set_contents_full(path, text, -1,
                                           G_FILE_SET_CONTENTS_CONSISTENT,
                                           0600, error);

    explicit_bzero(text, strlen(text));
    return ok;
}

gboolean qs_tls_prepare(const char *dir, const char *private_dir, uid_t uid,
                        gid_t gid, GError **error)
{
    static const char *const files[] = { "server-cert.pem", "server-key.pem",
                                         "ca-cert.pem" };

    if (g_mkdir_with_parents(private_dir, 0700) < 0 ||
        chmod(private_dir, 0700) < 0) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                    "%s: %s", private_dir, g_strerror(errno));
        return FALSE;
    }
    for (guint i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *src = g_build_filename(dir, files[i], NULL);
        g_autofree char *dst = g_build_filename(private_dir, files[i], NULL);
        g_autofree char *data = NULL;
        g_autoptr(GError) err = NULL;
        gsize len = 0;

        if (!g_file_get_contents(src, &data, &len, &err)) {
            if (i == 2 && g_error_matches(err, G_FILE_ERROR, G_FILE_ERROR_NOENT)) {
                continue;  /* the CA is optional, as for the helper */
            }
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                        "TLS directory ([listen] tls-dir) %s: %s", dir,
                        err->message);
            return FALSE;
        }
        if (!g_file_set_contents_full(dst, data, (gssize)len,
                                      G_FILE_SET_CONTENTS_CONSISTENT, 0600,
                                      error)) {
            explicit_bzero(data, len);
            return FALSE;
        }
        explicit_bzero(data, len);
        if (geteuid() == 0 && chown(dst, uid, gid) < 0) {
            g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                        "chown %s: %s", dst, g_strerror(errno));
            return FALSE;
        }
    }
    if (geteuid() == 0 && chown(private_dir, uid, gid) < 0) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                    "chown %s: %s", private_dir, g_strerror(errno));
        return FALSE;
    }
    return TRUE;
}

static void close_from(int first)
{
    if (syscall(SYS_close_range, first, ~0u, 0) < 0) {
        for (int fd = first; fd < 65536; fd++) {
            close(fd);
        }
    }
}

/* In the child only async-signal-safe calls: the launcher may have threads. */
static G_GNUC_NORETURN void child(const QsSpawnSpec *s, int ticket_fd,
                                  int err_fd, char **argv, char **envp)
{
    int src[N_FDS] = { s->display_fd, s->listen_fd, s->tls_listen_fd, ticket_fd,
                       s->control_fd, err_fd };
    int dst[N_FDS] = { FD_DISPLAY, FD_LISTEN, FD_TLS_LISTEN, FD_TICKET,
                       FD_CONTROL, FD_EXEC_ERR };
    int tmp[N_FDS];
    int n = 6 + (int)s->n_ports;
    int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int stage = 0;
    sigset_t none;

    /* The launcher ignores SIGPIPE; the helper starts with defaults. */
    signal(SIGPIPE, SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    for (guint i = 0; i < s->n_ports; i++) {
        src[6 + i] = s->ports[i].fd;
        dst[6 + i] = FD_PORT0 + (int)i;
    }
    /* Move every source above the targets first, so no dup2 clobbers one. */
    for (int i = 0; i < n; i++) {
        tmp[i] = src[i] >= 0 ? fcntl(src[i], F_DUPFD_CLOEXEC, 64) : -1;
        if (src[i] >= 0 && tmp[i] < 0) {
            goto fail;
        }
    }
    stage = 1;
    if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(s->log_fd, 1) < 0 ||
        dup2(s->log_fd, 2) < 0) {
        goto fail;
    }
    for (int i = 0; i < n; i++) {
        if (tmp[i] >= 0 && dup2(tmp[i], dst[i]) < 0) {
            goto fail;
        }
    }
    fcntl(FD_EXEC_ERR, F_SETFD, FD_CLOEXEC);
    err_fd = FD_EXEC_ERR;
    close_from(FD_PORT0 + (int)s->n_ports);
    stage = 2;
    if (setsid() < 0) {
        goto fail;
    }
    stage = 3;
    if (geteuid() == 0) {
        /* the helper drops to s->uid itself (--user), once confined */
    } else if (getuid() != s->uid) {
        errno = EPERM;
        goto fail;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
        goto fail;
    }
    stage = 4;
    execve(s->helper_path, argv, envp);
fail:
    {
        int msg[2] = { stage, errno };
        ssize_t n = write(err_fd, msg, sizeof(msg));

        (void)n;
    }
    _exit(127);
}

static const char *const stages[] = {
    "moving descriptors", "setting up stdio", "setsid",
    "dropping privileges", "exec",
};

pid_t qs_spawn_helper(const QsSpawnSpec *s, GError **error)
{
    g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
    char *envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/",
                     "LC_ALL=C.UTF-8", NULL };
    g_autofree char *ticket = s->password ? ticket_text(s->password, s->ticket_expiry)
                                          : NULL;
    int tp[2] = { -1, -1 }, ep[2];
    int msg[2];
    ssize_t n;
    pid_t pid;

    g_ptr_array_add(argv, g_strdup(s->helper_path));
    if (s->display_fd >= 0) {
        g_ptr_array_add(argv, g_strdup("--dbus-p2p-fd=3"));
    } else {
        g_ptr_array_add(argv, g_strdup_printf("--dbus-address=%s",
                                              s->bus_address));
        if (s->vm) {
            g_ptr_array_add(argv, g_strdup_printf("--vm=%s", s->vm));
        }
    }
    if (s->listen_fd >= 0) {
        g_ptr_array_add(argv, g_strdup("--listen-fd=4"));
    }
    if (s->tls_listen_fd >= 0) {
        g_ptr_array_add(argv, g_strdup("--tls-listen-fd=5"));
        g_ptr_array_add(argv, g_strdup_printf("--tls-dir=%s", s->tls_dir));
        if (s->secure_channels) {
            g_ptr_array_add(argv, g_strdup_printf("--secure-channels=%s",
                                                  s->secure_channels));
        }
    }
    g_ptr_array_add(argv, g_strdup_printf("--max-sessions=%u", s->max_sessions));
    g_ptr_array_add(argv, g_strdup_printf("--when-full=%s", s->when_full));
    g_ptr_array_add(argv, g_strdup_printf("--max-fps=%u", s->max_fps));
    if (s->no_console_page) {
        g_ptr_array_add(argv, g_strdup("--no-console-page"));
    }
    if (ticket) {
        g_ptr_array_add(argv, g_strdup("--ticket-fd=6"));
    } else {
        /* [listen] proxy-only: said in the helper's log at start. */
        g_ptr_array_add(argv, g_strdup("--disable-ticketing"));
        g_ptr_array_add(argv, g_strdup("--insecure"));
    }
    if (s->view_ticket_file) {
        g_ptr_array_add(argv, g_strdup_printf("--view-ticket-file=%s", s->view_ticket_file));
    }
    if (s->token_keys_file) {
        g_ptr_array_add(argv, g_strdup_printf("--token-keys-file=%s", s->token_keys_file));
    }
    if (s->control_fd >= 0) {
        g_ptr_array_add(argv, g_strdup("--control-fd=7"));
    }
    g_assert(s->n_ports <= QS_SPAWN_MAX_CHARDEVS);
    for (guint i = 0; i < s->n_ports; i++) {
        if (s->ports[i].usbredir) {
            g_ptr_array_add(argv, g_strdup_printf("--usbredir-fd=%u", FD_PORT0 + i));
        } else if (s->ports[i].smartcard) {
            g_ptr_array_add(argv, g_strdup_printf("--smartcard-fd=%u", FD_PORT0 + i));
        } else if (strcmp(s->ports[i].name, QS_AGENT_PORT_NAME) == 0) {
            /* The guest's own agent takes the place of the helper's. */
            g_ptr_array_add(argv, g_strdup_printf("--agent-fd=%u", FD_PORT0 + i));
        } else {
            g_ptr_array_add(argv, g_strdup_printf("--port-fd=%s=%u", s->ports[i].name,
                                                  FD_PORT0 + i));
        }
    }
    if (geteuid() == 0) {
        struct passwd *pw = getpwuid(s->uid);

        if (pw) {
            g_ptr_array_add(argv, g_strdup_printf("--user=%s", pw->pw_name));
        }
    }
    g_ptr_array_add(argv, NULL);

    n = 0;
    if (ticket) {
        if (pipe2(tp, O_CLOEXEC) < 0) {
            g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                        "pipe: %s", g_strerror(errno));
            return -1;
        }
        /* The ticket is far smaller than a pipe's buffer: write it all now. */
        n = write(tp[1], ticket, strlen(ticket));
        explicit_bzero(ticket, strlen(ticket));
        close(tp[1]);
    }
    if (n < 0 || pipe2(ep, O_CLOEXEC) < 0) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                    "ticket pipe: %s", g_strerror(errno));
        if (tp[0] >= 0) {
            close(tp[0]);
        }
        return -1;
    }
    pid = fork();
    if (pid == 0) {
        close(ep[0]);
        child(s, tp[0], ep[1], (char **)argv->pdata, envp);
    }
    if (tp[0] >= 0) {
        close(tp[0]);
    }
    close(ep[1]);
    if (pid < 0) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                    "fork: %s", g_strerror(errno));
        close(ep[0]);
        return -1;
    }
    do {
        n = read(ep[0], msg, sizeof(msg));
    } while (n < 0 && errno == EINTR);
    close(ep[0]);
    if (n == (ssize_t)sizeof(msg)) {
        waitpid(pid, NULL, 0);
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(msg[1]),
                    "starting the helper %s: %s: %s", s->helper_path,
                    stages[CLAMP(msg[0], 0, 4)], g_strerror(msg[1]));
        return -1;
    }
    return pid;
}
