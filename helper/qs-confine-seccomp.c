/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The seccomp allowlist the helper loads as its last confinement step. */

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <termios.h>
#include <linux/sched.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <gio/gio.h>

#include "qs-confine-seccomp.h"

#define ALLOW(ctx, name, ...) \
    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(name), __VA_ARGS__)
#define REFUSE(ctx, err, name) \
    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(err), SCMP_SYS(name), 0)

/* The syscall list and why each is there: docs/security.md. */
static int add_rules(scmp_filter_ctx ctx)
{
    static const int plain[] = {
        /* descriptors we already hold (gnutls and GDBus write with
         * sendmsg; writev for GIO output streams) */
        SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(writev), SCMP_SYS(close),
        SCMP_SYS(fcntl), SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(eventfd2),
        /* sockets: accepted, inherited, never created */
        SCMP_SYS(accept4), SCMP_SYS(accept), SCMP_SYS(recvfrom),
        SCMP_SYS(recvmsg), SCMP_SYS(sendto), SCMP_SYS(sendmsg),
        SCMP_SYS(shutdown), SCMP_SYS(getsockopt), SCMP_SYS(setsockopt),
        SCMP_SYS(getsockname), SCMP_SYS(getpeername),
        /* memory */
        SCMP_SYS(brk), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(madvise),
        /* threads, signals, time */
        SCMP_SYS(futex), SCMP_SYS(set_robust_list), SCMP_SYS(rseq),
        SCMP_SYS(sched_yield), SCMP_SYS(sched_getaffinity),
        SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(gettid),
        SCMP_SYS(getpid), SCMP_SYS(rt_sigaction),
        SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn),
        SCMP_SYS(sigaltstack), SCMP_SYS(restart_syscall),
        SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday),
        SCMP_SYS(nanosleep), SCMP_SYS(clock_nanosleep), SCMP_SYS(getrandom),
        SCMP_SYS(getuid), SCMP_SYS(geteuid), SCMP_SYS(getgid),
        SCMP_SYS(getegid),
    };
    /* FIONREAD (= SIOCINQ): GSocket; SIOCOUTQ, SIOCOUTQNSD: the net
     * layer's send-queue estimate; TCGETS: isatty(). */
    static const unsigned long ioctls[] = { FIONREAD, SIOCOUTQ, SIOCOUTQNSD,
                                            TCGETS };
    const scmp_datum_t clone_mask = CLONE_THREAD | CLONE_NEWNS |
        CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC |
        CLONE_NEWUTS | CLONE_NEWCGROUP;
    int r = 0;

    for (size_t i = 0; r == 0 && i < G_N_ELEMENTS(plain); i++) {
        r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, plain[i], 0);
    }
    for (size_t i = 0; r == 0 && i < G_N_ELEMENTS(ioctls); i++) {
        r = ALLOW(ctx, ioctl, 1, SCMP_A1(SCMP_CMP_EQ, ioctls[i]));
    }
    /* Threads only: no fork, no new namespaces. glibc falls back from
     * clone3 (whose flags sit in memory a filter cannot read) to clone. */
    r = r ? r : ALLOW(ctx, clone, 1,
                      SCMP_A0(SCMP_CMP_MASKED_EQ, clone_mask, CLONE_THREAD));
    r = r ? r : REFUSE(ctx, ENOSYS, clone3);
#ifdef QS_CONFINE_SANITIZER
    /* A sanitizer's report forks its symbolizer: let that fail instead of
     * killing the process before the report is written. */
    r = r ? r : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone),
                                 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD,
                                            0));
    r = r ? r : REFUSE(ctx, EPERM, fork);
    r = r ? r : REFUSE(ctx, EPERM, vfork);
#endif
    /* GLib's thread pools (GTask) copy the creator's scheduling settings
     * into each new thread: sched_setattr(own tid, attr, 0). The target
     * cannot be checked here; without CAP_SYS_NICE it can only lower the
     * priority of processes of the same uid. */
    r = r ? r : ALLOW(ctx, sched_setattr, 1, SCMP_A2(SCMP_CMP_EQ, 0));
    r = r ? r : ALLOW(ctx, sched_getattr, 0);
    /* Signals to our own threads only (raise, abort, GLib): the uid may be
     * shared with other processes (nobody). */
    r = r ? r : ALLOW(ctx, tgkill, 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()));
    /* No new executable memory. */
    r = r ? r : ALLOW(ctx, mmap, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
    r = r ? r : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mmap),
                                 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC,
                                            PROT_EXEC));
    r = r ? r : ALLOW(ctx, mprotect, 1,
                      SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
    r = r ? r : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
                                 SCMP_SYS(mprotect), 1,
                                 SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC,
                                         PROT_EXEC));
    /* fstat() is fstatat(fd, "", AT_EMPTY_PATH) in glibc up to 2.38; from
     * 2.39 (Debian 13) it is the fstat syscall again, on a descriptor
     * only. Paths are refused. */
    r = r ? r : ALLOW(ctx, fstat, 0);
    r = r ? r : ALLOW(ctx, newfstatat, 1,
                      SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH,
                              AT_EMPTY_PATH));
    r = r ? r : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES),
                                 SCMP_SYS(newfstatat), 1,
                                 SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH,
                                         0));
    r = r ? r : ALLOW(ctx, statx, 1,
                      SCMP_A2(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH,
                              AT_EMPTY_PATH));
    r = r ? r : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES),
                                 SCMP_SYS(statx), 1,
                                 SCMP_A2(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH,
                                         0));
    /* getrlimit() is prlimit64(0, res, NULL, old); setting is refused. */
    r = r ? r : ALLOW(ctx, prlimit64, 1, SCMP_A2(SCMP_CMP_EQ, 0));
    r = r ? r : ALLOW(ctx, prctl, 1, SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
    r = r ? r : ALLOW(ctx, prctl, 1, SCMP_A0(SCMP_CMP_EQ, PR_GET_NAME));
    /* Libraries probing for files or sockets get an error, not a kill;
     * the chroot already leaves nothing to open. execve and everything
     * not listed kills the process. */
    r = r ? r : REFUSE(ctx, EACCES, open);
    r = r ? r : REFUSE(ctx, EACCES, openat);
    r = r ? r : REFUSE(ctx, EACCES, openat2);
    r = r ? r : REFUSE(ctx, EACCES, access);
    r = r ? r : REFUSE(ctx, EACCES, faccessat);
    r = r ? r : REFUSE(ctx, EACCES, faccessat2);
    r = r ? r : REFUSE(ctx, EACCES, readlink);
    r = r ? r : REFUSE(ctx, EACCES, readlinkat);
    r = r ? r : REFUSE(ctx, EACCES, statfs);
    /* e.g. GLib removing a unix socket's path when it closes it */
    r = r ? r : REFUSE(ctx, EACCES, unlink);
    r = r ? r : REFUSE(ctx, EACCES, unlinkat);
    r = r ? r : REFUSE(ctx, EACCES, rename);
    r = r ? r : REFUSE(ctx, EACCES, renameat);
    r = r ? r : REFUSE(ctx, EACCES, renameat2);
    r = r ? r : REFUSE(ctx, EACCES, mkdir);
    r = r ? r : REFUSE(ctx, EACCES, mkdirat);
    r = r ? r : REFUSE(ctx, EACCES, rmdir);
    r = r ? r : REFUSE(ctx, EPERM, socket);
    /* The display layer makes an AF_UNIX pair for every listener it
     * (re)registers with qemu; nothing else may be made. */
    r = r ? r : ALLOW(ctx, socketpair, 1, SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
    r = r ? r : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
                                 SCMP_SYS(socketpair), 1,
                                 SCMP_A0(SCMP_CMP_NE, AF_UNIX));
    r = r ? r : REFUSE(ctx, EPERM, connect);
    return r;
}

gboolean qs_confine_seccomp_load(GError **error)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
    int r;

    if (!ctx) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "confinement: seccomp_init failed");
        return FALSE;
    }
    /* One filter for every thread, already running or not. */
    r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
    r = r ? r : add_rules(ctx);
    r = r ? r : seccomp_load(ctx);
    seccomp_release(ctx);
    if (r < 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "confinement: loading the seccomp filter: %s",
                    g_strerror(-r));
        return FALSE;
    }
    return TRUE;
}
