/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Confinement: what the helper gives up once it is serving (docs/security.md). */

#include <errno.h>
#include <grp.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <gio/gio.h>

#include "qs-confine.h"
#include "qs-confine-probe.h"
#include "qs-confine-seccomp.h"
#include "qs-confine-steps.h"
#include "qs-user-lookup.h"

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
        return qs_confine_errno_error(error, "no_new_privs");
    }
    if ((cfg->mask & QS_CONFINE_CAPS) && geteuid() == 0) {
        qs_confine_drop_bounding_set();
    }
    if (bus_peer && cfg->have_user) {
        /* The bus daemon checks the uid of whoever connects (SO_PEERCRED
         * and the EXTERNAL auth line); root stays the saved uid. */
        if (setgroups(1, &cfg->gid) < 0 ||
            setresgid(cfg->gid, cfg->gid, 0) < 0 ||
            setresuid(cfg->uid, cfg->uid, 0) < 0) {
            return qs_confine_errno_error(error, "switching to the bus user");
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
        return qs_confine_errno_error(error, "regaining root after the bus connect");
    }
    cfg->bus_identity = false;
    return TRUE;
}

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
    qs_confine_warm_up();
    active_steps = 0;
    if ((want & QS_CONFINE_NNP) && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
        return qs_confine_errno_error(error, "no_new_privs");
    }
#ifndef QS_CONFINE_SANITIZER
    if ((want & QS_CONFINE_NNP) && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
        return qs_confine_errno_error(error, "not dumpable");
    }
#endif
    active_steps |= want & QS_CONFINE_NNP;
    if ((want & QS_CONFINE_RLIMITS) && !qs_confine_apply_rlimits(cfg->max_files, cfg->max_as_mib, error)) {
        return FALSE;
    }
    active_steps |= want & QS_CONFINE_RLIMITS;
    /* unshare(CLONE_NEWNET) moves the calling thread and the threads it
     * creates from now on; the threads already running keep the old
     * namespace, where the seccomp filter alone stops new sockets. */
    if ((want & QS_CONFINE_NETNS) && unshare(CLONE_NEWNET) < 0) {
        return qs_confine_errno_error(error, "new network namespace");
    }
    active_steps |= want & QS_CONFINE_NETNS;
    if ((want & QS_CONFINE_FS) && !qs_confine_apply_fs(error)) {
        return FALSE;
    }
    active_steps |= want & QS_CONFINE_FS;
    if (want & QS_CONFINE_CAPS) {
        qs_confine_drop_bounding_set();    /* needs CAP_SETPCAP: before the switch */
    }
    if ((want & QS_CONFINE_USER) && cfg->have_user) {
        if (!qs_confine_apply_user(cfg->uid, cfg->gid, error)) {
            return FALSE;
        }
        keep_dumpable_for_sanitizer();
        active_steps |= QS_CONFINE_USER;
    }
    if ((want & QS_CONFINE_CAPS) && !qs_confine_apply_caps(error)) {
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
        qs_confine_probe_start(cfg->probe, cfg->probe_sock);
    }
#endif
    return TRUE;
}

guint qs_confine_active(void)
{
    return active_steps;
}
