/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Confinement: what the helper gives up once it is serving (docs/security.md). */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <iconv.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <gio/gio.h>

#include "qs-confine.h"
#include "qs-confine-seccomp.h"
#include "qs-user-lookup.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define QS_CONFINE_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define QS_CONFINE_SANITIZER 1
#endif
#endif

/* Descriptors: qemu's D-Bus socket, listeners, 64 linking + a few dozen
 * sessions of ~6 channels, memfds in flight, one wakeup fd per thread. */
#define DEFAULT_MAX_FILES 1024
/* Address space: two maps of the largest surface (2 x 512 MiB), the screen
 * copy (256 MiB), encoder frames, glibc arenas (64 MiB each) and stacks. */
#define DEFAULT_MAX_AS_MIB 8192

static const struct {
    const char *name;
    guint bit;
} steps[] = {
    { "nnp", QS_CONFINE_NNP },
    { "user", QS_CONFINE_USER },
    { "caps", QS_CONFINE_CAPS },
    { "rlimits", QS_CONFINE_RLIMITS },
    { "fs", QS_CONFINE_FS },
    { "netns", QS_CONFINE_NETNS },
    { "seccomp", QS_CONFINE_SECCOMP },
};

static guint active_steps;

#ifdef QS_CONFINE_SANITIZER
/* LeakSanitizer's exit-time check clones a tracer that lists the threads in
 * /proc/self/task and ptraces them: impossible under the filter or in the
 * empty root, so it is off after those steps. A sanitizer build (never
 * shipped) stays dumpable through the nnp step and every uid change, so
 * that the check runs with the other steps on: the tests run their helpers
 * on the sanitizer build without fs and seccomp for it (tests/README.md). */
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
    if (active_steps & (QS_CONFINE_SECCOMP | QS_CONFINE_FS)) {
        return 1;
    }
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 1;
}
#endif

/* A uid change makes the process non-dumpable; see __lsan_is_turned_off. */
static void keep_dumpable_for_sanitizer(void)
{
#ifdef QS_CONFINE_SANITIZER
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
#endif
}

void qs_confine_config_init(QsConfineConfig *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->max_files = DEFAULT_MAX_FILES;
    cfg->max_as_mib = DEFAULT_MAX_AS_MIB;
    cfg->probe_sock = -1;
}

void qs_confine_config_clear(QsConfineConfig *cfg)
{
    g_clear_pointer(&cfg->steps, g_free);
    g_clear_pointer(&cfg->user, g_free);
    g_clear_pointer(&cfg->user_name, g_free);
    g_clear_pointer(&cfg->probe, g_free);
    if (cfg->probe_sock >= 0) {
        close(cfg->probe_sock);
        cfg->probe_sock = -1;
    }
}

GOptionGroup *qs_confine_option_group(QsConfineConfig *cfg)
{
    const GOptionEntry entries[] = {
        { "confine", 0, 0, G_OPTION_ARG_STRING, &cfg->steps,
          "Confinement steps once started: all (default), none, or a comma "
          "list of nnp, user, caps, rlimits, fs, netns, seccomp; '-STEP' "
          "removes one (e.g. all,-seccomp)", "LIST" },
        { "user", 0, 0, G_OPTION_ARG_STRING, &cfg->user,
          "When started as root, run as USER (default: qemu-spice if it "
          "exists, libvirt's qemu user on a per-VM bus, else nobody)",
          "USER" },
        { "max-files", 0, 0, G_OPTION_ARG_INT, &cfg->max_files,
          "RLIMIT_NOFILE once confined (default 1024)", "N" },
        { "max-address-space", 0, 0, G_OPTION_ARG_INT, &cfg->max_as_mib,
          "RLIMIT_AS in MiB once confined, 0 for none (default 8192; "
          "ignored in sanitizer builds)", "MIB" },
#ifdef QS_TEST_CONTROLS
        { "test-confine-probe", 0, 0, G_OPTION_ARG_STRING, &cfg->probe,
          "Test builds only: once confined, try open, connect or exec and "
          "log the outcome", "open|connect|exec" },
#endif
        { NULL }
    };
    GOptionGroup *group = g_option_group_new("confinement",
        "Confinement options (docs/security.md):", "Show confinement options",
        NULL, NULL);

    g_option_group_add_entries(group, entries);
    return group;
}

gboolean qs_confine_parse_steps(const char *list, guint *mask, GError **error)
{
    g_auto(GStrv) words = g_strsplit(list ? list : "all", ",", -1);
    guint m = 0;

    for (char **w = words; *w; w++) {
        const char *name = g_strstrip(*w);
        gboolean off = name[0] == '-';
        guint bit = 0;

        name += off;
        if (g_str_equal(name, "all")) {
            bit = QS_CONFINE_ALL;
        } else if (g_str_equal(name, "none")) {
            m = 0;
            continue;
        }
        for (size_t i = 0; !bit && i < G_N_ELEMENTS(steps); i++) {
            if (g_str_equal(name, steps[i].name)) {
                bit = steps[i].bit;
            }
        }
        if (!bit) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--confine: unknown step '%s'", name);
            return FALSE;
        }
        m = off ? m & ~bit : m | bit;
    }
    *mask = m;
    return TRUE;
}

static gboolean set_errno_error(GError **error, const char *what)
{
    int e = errno;

    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e),
                "confinement: %s: %s", what, g_strerror(e));
    return FALSE;
}

static gboolean resolve_user(QsConfineConfig *cfg, gboolean bus_peer,
                             GError **error)
{
    static const char *const bus_users[] = { "libvirt-qemu", "qemu", NULL };
    static const char *const own_users[] = { "qemu-spice", "nobody", NULL };
    const char *const *candidates = bus_peer ? bus_users : own_users;
    QsUserEntry pw;
    gboolean found = FALSE;

    if (cfg->user) {
        if (!qs_user_lookup(cfg->user, &pw, error)) {
            if (error && !*error) {
                g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                            "--user: no user '%s'", cfg->user);
            }
            return FALSE;
        }
        found = TRUE;
    }
    for (size_t i = 0; !found && candidates[i]; i++) {
        g_autoptr(GError) local = NULL;

        found = qs_user_lookup(candidates[i], &pw, &local);
        if (local) {
            g_propagate_error(error, g_steal_pointer(&local));
            return FALSE;
        }
    }
    if (!found || pw.uid == 0 || pw.gid == 0) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "confinement: no unprivileged user to run as (use "
                    "--user or --confine=all,-user)");
        return FALSE;
    }
    cfg->have_user = true;
    cfg->uid = pw.uid;
    cfg->gid = pw.gid;
    cfg->user_name = g_strdup(pw.name);
    return TRUE;
}

static void drop_bounding_set(void)
{
    for (int cap = 0; cap <= 63; cap++) {
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno == EINVAL) {
            break;   /* past the kernel's last capability */
        }
    }
}

gboolean qs_confine_prepare(QsConfineConfig *cfg, gboolean bus_peer,
                            GError **error)
{
    if (!qs_confine_parse_steps(cfg->steps, &cfg->mask, error)) {
        return FALSE;
    }
    if (cfg->max_files < 16 || cfg->max_as_mib < 0) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--max-files takes N >= 16, --max-address-space MIB >= 0");
        return FALSE;
    }
#ifdef QS_TEST_CONTROLS
    if (cfg->probe && !g_str_equal(cfg->probe, "open") &&
        !g_str_equal(cfg->probe, "connect") &&
        !g_str_equal(cfg->probe, "exec")) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--test-confine-probe takes open, connect or exec");
        return FALSE;
    }
#endif
    if (geteuid() == 0 && (cfg->mask & QS_CONFINE_USER) &&
        !resolve_user(cfg, bus_peer, error)) {
        return FALSE;
    }
    if (geteuid() != 0 && cfg->user) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--user needs the helper to be started as root");
        return FALSE;
    }
    /* Both are inherited by the threads created from now on; applying
     * them again later would only reach the calling thread. */
    if ((cfg->mask & QS_CONFINE_NNP) &&
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
        return set_errno_error(error, "no_new_privs");
    }
    if ((cfg->mask & QS_CONFINE_CAPS) && geteuid() == 0) {
        drop_bounding_set();
    }
    if (bus_peer && cfg->have_user) {
        /* The bus daemon checks the uid of whoever connects (SO_PEERCRED
         * and the EXTERNAL auth line); root stays the saved uid. */
        if (setgroups(1, &cfg->gid) < 0 ||
            setresgid(cfg->gid, cfg->gid, 0) < 0 ||
            setresuid(cfg->uid, cfg->uid, 0) < 0) {
            return set_errno_error(error, "switching to the bus user");
        }
        cfg->bus_identity = true;
    }
    return TRUE;
}

gboolean qs_confine_end_bus_identity(QsConfineConfig *cfg, GError **error)
{
    if (!cfg->bus_identity) {
        return TRUE;
    }
    if (setresuid(-1, 0, -1) < 0 || setresgid(-1, 0, -1) < 0) {
        return set_errno_error(error, "regaining root after the bus connect");
    }
    cfg->bus_identity = false;
    return TRUE;
}

/* Lazy file opens of the libraries, done now while files are reachable. */
static void warm_up(void)
{
    static const int errnos[] = {
        EPERM, ENOENT, EINTR, EIO, EBADF, EAGAIN, ENOMEM, EACCES, EINVAL,
        ENFILE, EMFILE, ENOSPC, EPIPE, ENOTSOCK, EMSGSIZE, ENOTCONN,
        ECONNABORTED, ECONNRESET, ECONNREFUSED, ETIMEDOUT, EHOSTUNREACH,
        ENETUNREACH, EADDRINUSE, ENOSYS, ENODATA, EPROTO,
    };

    (void)g_random_int();           /* GRand reads /dev/urandom once */
    tzset();                        /* /etc/localtime */
    g_time_zone_unref(g_time_zone_new_local());
    (void)g_get_charset(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(errnos); i++) {
        (void)g_strerror(errnos[i]); /* cached, converted via iconv once */
    }
    iconv_t cd = iconv_open("UTF-8", "ISO-8859-1");
    if (cd != (iconv_t)-1) {
        iconv_close(cd);
    }
    (void)g_get_num_processors();
}

static gboolean apply_rlimits(QsConfineConfig *cfg, GError **error)
{
    struct rlimit files = { (rlim_t)cfg->max_files, (rlim_t)cfg->max_files };
    struct rlimit none = { 0, 0 };

    if (setrlimit(RLIMIT_NOFILE, &files) < 0) {
        return set_errno_error(error, "RLIMIT_NOFILE");
    }
    /* No core dumps: they would hold the ticket, keys and the screen. */
    if (setrlimit(RLIMIT_CORE, &none) < 0) {
        return set_errno_error(error, "RLIMIT_CORE");
    }
#ifndef QS_CONFINE_SANITIZER
    /* A sanitizer's shadow memory reserves terabytes: no limit there. */
    if (cfg->max_as_mib > 0) {
        rlim_t bytes = (rlim_t)cfg->max_as_mib << 20;
        struct rlimit as = { bytes, bytes };

        if (setrlimit(RLIMIT_AS, &as) < 0) {
            return set_errno_error(error, "RLIMIT_AS");
        }
    }
#endif
    return TRUE;
}

/* An empty root nothing can be created in: a directory removed after we
 * entered it. chroot() changes the root of every thread sharing our
 * fs_struct, i.e. all of them, unlike unshare(CLONE_NEWNS). */
static gboolean apply_fs(GError **error)
{
    char dir[] = "/tmp/qemu-spice-root-XXXXXX";
    char run_dir[] = "/run/qemu-spice-root-XXXXXX";
    char *made = mkdtemp(dir);

    if (!made) {
        made = mkdtemp(run_dir);    /* a read-only or missing /tmp */
    }
    if (!made) {
        return set_errno_error(error, "making an empty directory");
    }
    if (chdir(made) < 0) {
        int e = errno;

        rmdir(made);
        errno = e;
        return set_errno_error(error, "chdir to the empty directory");
    }
    if (rmdir(made) < 0 || chroot(".") < 0 || chdir("/") < 0) {
        return set_errno_error(error, "chroot into an empty directory");
    }
    return TRUE;
}

static gboolean apply_user(QsConfineConfig *cfg, GError **error)
{
    uid_t r, e, s;

    /* glibc applies each call to every thread of the process. */
    if (setgroups(0, NULL) < 0 ||
        setresgid(cfg->gid, cfg->gid, cfg->gid) < 0 ||
        setresuid(cfg->uid, cfg->uid, cfg->uid) < 0) {
        return set_errno_error(error, "switching user");
    }
    if (getresuid(&r, &e, &s) < 0 || r != cfg->uid || e != cfg->uid ||
        s != cfg->uid || setuid(0) == 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "confinement: the uid switch did not stick");
        return FALSE;
    }
    return TRUE;
}

static gboolean apply_caps(GError **error)
{
    struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct data[2];

    memset(data, 0, sizeof(data));
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
        errno != EINVAL) {
        return set_errno_error(error, "clearing ambient capabilities");
    }
    if (syscall(SYS_capset, &hdr, data) < 0) {
        return set_errno_error(error, "dropping capabilities");
    }
    return TRUE;
}

#ifdef QS_TEST_CONTROLS
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

static gboolean run_probe(gpointer data)
{
    QsConfineConfig *cfg = data;

    if (g_str_equal(cfg->probe, "open")) {
        int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);

        probe_result("open /etc/passwd", fd);
        if (fd >= 0) {
            close(fd);
        }
    } else if (g_str_equal(cfg->probe, "connect")) {
        struct sockaddr_in sin = { .sin_family = AF_INET,
                                   .sin_port = htons(9),
                                   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        probe_result("socket AF_INET", fd);
        if (fd >= 0) {
            close(fd);
        }
        probe_result("connect 127.0.0.1:9",
                     connect(cfg->probe_sock, (struct sockaddr *)&sin,
                             sizeof(sin)));
    } else {
        char *argv[] = { (char *)"/bin/true", NULL };
        char *envp[] = { NULL };

        g_message("confine-probe exec: trying /bin/true");
        probe_result("exec /bin/true", execve(argv[0], argv, envp));
    }
    return G_SOURCE_REMOVE;
}
#endif

static void log_steps(QsConfineConfig *cfg, guint requested)
{
    g_autoptr(GString) on = g_string_new(NULL);
    g_autoptr(GString) off = g_string_new(NULL);

    for (size_t i = 0; i < G_N_ELEMENTS(steps); i++) {
        GString *s = (active_steps & steps[i].bit) ? on : off;

        g_string_append_printf(s, "%s%s", s->len ? "," : "", steps[i].name);
        if (s == on && steps[i].bit == QS_CONFINE_USER) {
            g_string_append_printf(s, "=%s(%u:%u)", cfg->user_name,
                                   (unsigned)cfg->uid, (unsigned)cfg->gid);
        } else if (s == on && steps[i].bit == QS_CONFINE_RLIMITS) {
            g_string_append_printf(s, "(files=%d,as=", cfg->max_files);
#ifdef QS_CONFINE_SANITIZER
            g_string_append(s, "unlimited:sanitizer)");
#else
            if (cfg->max_as_mib) {
                g_string_append_printf(s, "%dMiB)", cfg->max_as_mib);
            } else {
                g_string_append(s, "unlimited)");
            }
#endif
        } else if (s == off && (requested & steps[i].bit)) {
            g_string_append(s, "(not root)");
        }
    }
    if (off->len) {
        g_warning("confinement: active %s; OFF: %s", on->len ? on->str : "-",
                  off->str);
    } else {
        g_message("confinement: active %s", on->str);
    }
}

gboolean qs_confine_apply(QsConfineConfig *cfg, GError **error)
{
    guint want = cfg->mask;
    bool root;

    if (!qs_confine_end_bus_identity(cfg, error)) {
        return FALSE;
    }
    keep_dumpable_for_sanitizer();
    root = geteuid() == 0;
    if (!root) {
        /* These need privileges the helper was not started with. */
        want &= ~(guint)(QS_CONFINE_USER | QS_CONFINE_CAPS | QS_CONFINE_FS |
                         QS_CONFINE_NETNS);
    }
#ifdef QS_TEST_CONTROLS
    if (cfg->probe && g_str_equal(cfg->probe, "connect")) {
        cfg->probe_sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    }
#endif
    warm_up();
    active_steps = 0;
    if ((want & QS_CONFINE_NNP) && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
        return set_errno_error(error, "no_new_privs");
    }
#ifndef QS_CONFINE_SANITIZER
    if ((want & QS_CONFINE_NNP) && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
        return set_errno_error(error, "not dumpable");
    }
#endif
    active_steps |= want & QS_CONFINE_NNP;
    if ((want & QS_CONFINE_RLIMITS) && !apply_rlimits(cfg, error)) {
        return FALSE;
    }
    active_steps |= want & QS_CONFINE_RLIMITS;
    /* unshare(CLONE_NEWNET) moves the calling thread and the threads it
     * creates from now on; the threads already running keep the old
     * namespace, where the seccomp filter alone stops new sockets. */
    if ((want & QS_CONFINE_NETNS) && unshare(CLONE_NEWNET) < 0) {
        return set_errno_error(error, "new network namespace");
    }
    active_steps |= want & QS_CONFINE_NETNS;
    if ((want & QS_CONFINE_FS) && !apply_fs(error)) {
        return FALSE;
    }
    active_steps |= want & QS_CONFINE_FS;
    if (want & QS_CONFINE_CAPS) {
        drop_bounding_set();    /* needs CAP_SETPCAP: before the switch */
    }
    if ((want & QS_CONFINE_USER) && cfg->have_user) {
        if (!apply_user(cfg, error)) {
            return FALSE;
        }
        keep_dumpable_for_sanitizer();
        active_steps |= QS_CONFINE_USER;
    }
    if ((want & QS_CONFINE_CAPS) && !apply_caps(error)) {
        return FALSE;
    }
    active_steps |= want & QS_CONFINE_CAPS;
    if ((want & QS_CONFINE_SECCOMP) && !qs_confine_seccomp_load(error)) {
        return FALSE;
    }
    active_steps |= want & QS_CONFINE_SECCOMP;
    log_steps(cfg, cfg->mask);
#ifdef QS_TEST_CONTROLS
    if (cfg->probe) {
        g_idle_add(run_probe, cfg);
    }
#endif
    return TRUE;
}

guint qs_confine_active(void)
{
    return active_steps;
}
