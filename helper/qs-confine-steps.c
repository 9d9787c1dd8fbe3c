/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The confinement steps one by one, as qs_confine_apply() runs them (docs/security.md). */
#include "qs-confine-steps.h"

#include <errno.h>
#include <grp.h>
#include <iconv.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <gio/gio.h>

gboolean qs_confine_errno_error(GError **error, const char *what)
{
    int e = errno;

    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e),
                "confinement: %s: %s", what, g_strerror(e));
    return FALSE;
}

void qs_confine_drop_bounding_set(void)
{
    for (int cap = 0; cap <= 63; cap++) {
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno == EINVAL) {
            break;   /* past the kernel's last capability */
        }
    }
}

/* Lazy file opens of the libraries, done now while files are reachable. */
void qs_confine_warm_up(void)
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

gboolean qs_confine_apply_rlimits(int max_files, int max_as_mib, GError **error)
{
    struct rlimit files = { (rlim_t)max_files, (rlim_t)max_files };
    struct rlimit none = { 0, 0 };

    if (setrlimit(RLIMIT_NOFILE, &files) < 0) {
        return qs_confine_errno_error(error, "RLIMIT_NOFILE");
    }
    /* No core dumps: they would hold the ticket, keys and the screen. */
    if (setrlimit(RLIMIT_CORE, &none) < 0) {
        return qs_confine_errno_error(error, "RLIMIT_CORE");
    }
#ifdef QS_CONFINE_SANITIZER
    /* A sanitizer's shadow memory reserves terabytes: no limit there. */
    (void)max_as_mib;
#else
    if (max_as_mib > 0) {
        rlim_t bytes = (rlim_t)max_as_mib << 20;
        struct rlimit as = { bytes, bytes };

        if (setrlimit(RLIMIT_AS, &as) < 0) {
            return qs_confine_errno_error(error, "RLIMIT_AS");
        }
    }
#endif
    return TRUE;
}

/* An empty root nothing can be created in: a directory removed after we
 * entered it. chroot() changes the root of every thread sharing our
 * fs_struct, i.e. all of them, unlike unshare(CLONE_NEWNS). */
gboolean qs_confine_apply_fs(GError **error)
{
    char dir[] = "/tmp/qemu-spice-root-XXXXXX";
    char run_dir[] = "/run/qemu-spice-root-XXXXXX";
    char *made = mkdtemp(dir);

    if (!made) {
        made = mkdtemp(run_dir);    /* a read-only or missing /tmp */
    }
    if (!made) {
        return qs_confine_errno_error(error, "making an empty directory");
    }
    if (chdir(made) < 0) {
        int e = errno;

        rmdir(made);
        errno = e;
        return qs_confine_errno_error(error, "chdir to the empty directory");
    }
    if (rmdir(made) < 0 || chroot(".") < 0 || chdir("/") < 0) {
        return qs_confine_errno_error(error, "chroot into an empty directory");
    }
    return TRUE;
}

gboolean qs_confine_apply_user(uid_t uid, gid_t gid, GError **error)
{
    uid_t r, e, s;

    /* glibc applies each call to every thread of the process. */
    if (setgroups(0, NULL) < 0 ||
        setresgid(gid, gid, gid) < 0 ||
        setresuid(uid, uid, uid) < 0) {
        return qs_confine_errno_error(error, "switching user");
    }
    if (getresuid(&r, &e, &s) < 0 || r != uid || e != uid || s != uid || setuid(0) == 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "confinement: the uid switch did not stick");
        return FALSE;
    }
    return TRUE;
}

gboolean qs_confine_apply_caps(GError **error)
{
    struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct data[2];

    memset(data, 0, sizeof(data));
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
        errno != EINVAL) {
        return qs_confine_errno_error(error, "clearing ambient capabilities");
    }
    if (syscall(SYS_capset, &hdr, data) < 0) {
        return qs_confine_errno_error(error, "dropping capabilities");
    }
    return TRUE;
}
