/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Confinement of the helper once start-up is over: uid, caps, limits, seccomp. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <glib.h>

G_BEGIN_DECLS

/* The steps, as named in --confine=LIST (docs/security.md). */
typedef enum {
    QS_CONFINE_NNP = 1 << 0,     /* no_new_privs, not dumpable */
    QS_CONFINE_USER = 1 << 1,    /* unprivileged uid/gid, no groups */
    QS_CONFINE_CAPS = 1 << 2,    /* empty capability and bounding sets */
    QS_CONFINE_RLIMITS = 1 << 3, /* RLIMIT_NOFILE, RLIMIT_AS, RLIMIT_NPROC.. */
    QS_CONFINE_FS = 1 << 4,      /* chroot into a deleted empty directory */
    QS_CONFINE_NETNS = 1 << 5,   /* a new, empty network namespace */
    QS_CONFINE_SECCOMP = 1 << 6, /* syscall allowlist, kill otherwise */
    QS_CONFINE_ALL = (1 << 7) - 1,
} QsConfineStep;

typedef struct {
    /* Parsed from the command line (see qs_confine_option_group()). */
    char *steps;             /* --confine: "all", "none", "all,-seccomp"... */
    char *user;              /* --user */
    gint max_files;          /* --max-files: RLIMIT_NOFILE */
    gint max_as_mib;         /* --max-address-space: RLIMIT_AS, 0 = none */
    char *probe;             /* test builds: --test-confine-probe */

    /* Filled by qs_confine_prepare(). */
    guint mask;              /* QsConfineStep bits requested */
    bool have_user;          /* a uid/gid to switch to was resolved */
    uid_t uid;
    gid_t gid;
    char *user_name;
    bool bus_identity;       /* real/effective uid already the user's */
    int probe_sock;          /* test builds: a socket for the connect probe */
} QsConfineConfig;

void qs_confine_config_init(QsConfineConfig *cfg);
void qs_confine_config_clear(QsConfineConfig *cfg);

/* A "Confinement" option group writing into `cfg` (which must outlive the
 * parse). */
GOptionGroup *qs_confine_option_group(QsConfineConfig *cfg);

/*
 * Call once after parsing, before any thread exists and before attaching
 * to qemu. Checks the options, resolves the user (NSS is still reachable),
 * sets no_new_privs and empties the capability bounding set so that every
 * thread started later inherits both. With `bus_peer` (attaching through a
 * D-Bus bus whose daemon authenticates by uid, e.g. libvirt's per-VM bus),
 * the real and effective uid/gid become the user's right away, root being
 * kept as saved uid so that qs_confine_apply() can still finish. Errors are
 * usage or set-up errors.
 */
gboolean qs_confine_prepare(QsConfineConfig *cfg, gboolean bus_peer,
                            GError **error);

/*
 * With bus_peer: call right after the bus connection is made (after
 * attaching to qemu): takes root back as effective uid, so the rest of the
 * start-up (sockets, files) runs as before. Does nothing otherwise.
 */
gboolean qs_confine_end_bus_identity(QsConfineConfig *cfg, GError **error);

/*
 * Call once when start-up is over: every descriptor received or opened,
 * keys and ticket read, the threads that exist at that point started.
 * Applies the requested steps and logs one line naming those active and
 * those off. Returns FALSE (the caller must exit) if a requested step
 * fails; a step that cannot apply to how the helper was started (e.g. the
 * uid switch when not started as root) is reported off, not an error.
 */
gboolean qs_confine_apply(QsConfineConfig *cfg, GError **error);

/* The steps actually applied by qs_confine_apply(). */
guint qs_confine_active(void);

/* Test support: parse a --confine LIST into QsConfineStep bits. */
gboolean qs_confine_parse_steps(const char *list, guint *mask,
                                GError **error);

G_END_DECLS
