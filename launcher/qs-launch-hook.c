/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The libvirt qemu hook's entry point. libvirt runs hooks synchronously,
 * holding the domain's job, and a hook that calls libvirt deadlocks: so on
 * 'started' the console is only asked for (systemd's start job, or a
 * detached launcher where systemd does not run the host) and comes up after
 * the hook has returned; 'stopped' and 'release' only ask it to go. libvirt
 * drops a hook's stderr when it exits 0, and a console problem must never
 * stop a domain, so every failure is logged (syslog, which is the journal on
 * a systemd host) and recorded for 'status', and the hook exits 0. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <gio/gio.h>
#include "qs-launch-attach.h"
#include "qs-launch-domain.h"
#include "qs-launch-hook.h"
#include "qs-launch-log.h"
#include "qs-launch-pending.h"
#include "qs-launch-run-dir.h"
#include "qs-launch-systemd.h"

#define HOOK_XML_MAX (16u << 20)
#define HOOK_RECORD_WAIT_MS 2000
#define SYSTEMD_RUN_DIR "/run/systemd/system"

static char *read_stdin_bounded(void)
{
    GString *s = g_string_new(NULL);
    char buf[65536];
    ssize_t n;

    while ((n = read(0, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            break;
        }
        if (s->len < HOOK_XML_MAX) {
            g_string_append_len(s, buf, n);
        }
    }
    return g_string_free(s, FALSE);
}

/* The hook's own voice: syslog (the journal on a systemd host) for the
 * administrator, the domain in every line; stderr for libvirt's log. */
static void hook_say(gboolean error, const char *domain, const char *msg)
{
    fprintf(stderr, "qemu-spice hook: %s: %s\n", domain, msg);
    qs_log_use_syslog(domain);
    if (error) {
        qs_log_error("hook: %s: %s", domain, msg);
    } else {
        qs_log_info("hook: %s: %s", domain, msg);
    }
}

static void record(const QsLaunchConfig *cfg, const char *domain,
                   const char *unit, const char *error)
{
    QsPending rec = {
        .failed = error != NULL,
        .since = g_get_real_time() / G_USEC_PER_SEC,
        .error = (char *)error,
        .unit = (char *)unit,
    };

    qs_pending_save(cfg, domain, &rec, NULL);
}

/* systemd owns the console: the launcher runs in qemu-spice@UUID.service,
 * in its own cgroup, with the unit's restart policy and the journal. */
static void start_unit(const QsLaunchConfig *cfg, const char *domain, const char *uuid)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *unit = qs_systemd_unit_name(uuid, &err);
    g_autofree char *msg = NULL;

    if (!unit) {
        msg = g_strdup_printf("no console: %s", err->message);
        record(cfg, domain, NULL, msg);
        hook_say(TRUE, domain, msg);
        return;
    }
    /* Recorded first: 'status' says "starting" as soon as virsh returns. */
    record(cfg, domain, unit, NULL);
    if (!qs_systemd_ctl(qs_systemctl_path(), "start", unit,
                        QS_SYSTEMD_CTL_TIMEOUT_MS, &err)) {
        msg = g_strdup_printf("no console: %s", err->message);
        record(cfg, domain, unit, msg);
        hook_say(TRUE, domain, msg);
        return;
    }
    msg = g_strdup_printf("asked systemd to start %s", unit);
    hook_say(FALSE, domain, msg);
}

/* Without systemd: a detached launcher (double fork, a new session, stdio
 * on /dev/null) that waits until libvirt has finished the start job. The
 * hook returns once that launcher has recorded that it is attaching. */
static void start_detached(QsLaunchConfig *cfg, const char *domain)
{
    int recorded[2];
    char byte;
    pid_t pid;

    if (pipe2(recorded, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
        g_autofree char *msg = g_strdup_printf("no console: fork: %s",
                                               g_strerror(errno));

        record(cfg, domain, NULL, msg);
        hook_say(TRUE, domain, msg);
        return;
    }
    if (pid == 0) {
        int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        QsAttachOptions o = {
            .expiry = -1,
            .supervise = cfg->supervise,
            .foreground = TRUE,
            .wait_s = cfg->wait_s,
            .syslog = TRUE,
            .hook = TRUE,
        };
        QsPending rec = { .since = g_get_real_time() / G_USEC_PER_SEC };

        /* Off libvirt's pipes before anything else, so libvirtd sees
         * EOF as soon as the hook's own process exits. */
        close(recorded[0]);
        if (null_fd >= 0) {
            dup2(null_fd, 0);
            dup2(null_fd, 1);
            dup2(null_fd, 2);
        }
        setsid();
        if (fork() != 0) {
            _exit(0);
        }
        rec.pid = getpid();
        qs_pending_save(cfg, domain, &rec, NULL);
        close(recorded[1]);   /* the hook may return now */
        _exit(qs_attach(cfg, domain, &o));
    }
    close(recorded[1]);
    waitpid(pid, NULL, 0);
    /* EOF once the launcher has written its record, or has died: one
     * small file on the run directory's tmpfs. Bounded all the same,
     * since libvirt waits for us. */
    {
        struct pollfd pfd = { .fd = recorded[0], .events = POLLIN };
        gint64 deadline = g_get_monotonic_time() +
                          HOOK_RECORD_WAIT_MS * 1000;

        for (;;) {
            int left = (int)((deadline - g_get_monotonic_time()) / 1000);
            int r;

            if (left <= 0) {
                break;
            }
            r = poll(&pfd, 1, left);
            if (r < 0 && errno == EINTR) {
                continue;
            }
            if (r <= 0 || read(recorded[0], &byte, 1) <= 0) {
                break;   /* EOF, an error or the deadline */
            }
        }
    }
    close(recorded[0]);
}

static void stop(QsLaunchConfig *cfg, const char *domain, const char *uuid, gboolean wanted)
{
    g_autoptr(QsLaunchState) st = qs_find_state(cfg, domain, NULL);
    g_autoptr(QsPending) p = qs_pending_load(cfg, domain);

    /* Only asked: the launcher removes the console itself, after the hook
     * has returned. A unit is stopped whenever this domain may have one
     * (opted in, or a console or record exists: a manual start). */
    if (qs_systemd_booted(SYSTEMD_RUN_DIR) && (wanted || st || p)) {
        g_autoptr(GError) err = NULL;
        g_autofree char *unit = qs_systemd_unit_name(uuid ? uuid : st ? st->uuid : NULL,
                                                      NULL);

        if (unit && !qs_systemd_ctl(qs_systemctl_path(), "stop", unit,
                                    QS_SYSTEMD_CTL_TIMEOUT_MS, &err)) {
            hook_say(TRUE, domain, err->message);
        }
    }
    /* A launcher outside the unit ('attach' by hand, or the hook's
     * detached one); SIGTERM is a clean stop for the unit's too. */
    if (st && qs_pid_alive(st->monitor_pid) && qs_domain_locked(cfg, domain)) {
        kill(st->monitor_pid, SIGTERM);
    }
    /* A failed or queued attach's record is about the run that ended. */
    if (p && (p->failed || !qs_pid_alive(p->pid))) {
        qs_pending_remove(cfg, domain, p->pid);
    }
}

/* CONFIG_ERROR: the configuration did not load; CFG holds the defaults.
 * No console is started then (the unit's launcher would fail the same
 * way), but a console that runs is still stopped. */
static int hook(QsLaunchConfig *cfg, const char *config_error, char **args)
{
    g_autofree char *xml = read_stdin_bounded();
    g_autofree char *uuid = NULL;
    g_autoptr(GError) err = NULL;
    const char *domain = args[0];
    const char *op = args[1];
    gboolean started, optin;

    if (!domain || !op || !qs_domain_name_ok(domain, NULL)) {
        return 0;
    }
    started = strcmp(op, "started") == 0;
    if (!started && strcmp(op, "stopped") != 0 && strcmp(op, "release") != 0) {
        return 0;
    }
    optin = qs_domain_xml_opts_in(xml, NULL, &err);
    uuid = qs_domain_xml_uuid(xml);
    if (started && (err || config_error)) {
        g_autofree char *msg = g_strdup_printf("no console: %s",
            config_error ? config_error : err->message);

        record(cfg, domain, NULL, msg);
        hook_say(TRUE, domain, msg);
        return 0;
    }
    optin = !err && qs_launch_config_wants_autostart(cfg, domain, optin);
    if (!started) {
        stop(cfg, domain, uuid, optin);
    } else if (!optin) {
        return 0;
    } else if (qs_systemd_booted(SYSTEMD_RUN_DIR)) {
        start_unit(cfg, domain, uuid);
    } else {
        hook_say(FALSE, domain, "systemd does not run this host (no "
                 SYSTEMD_RUN_DIR "): starting a detached launcher");
        start_detached(cfg, domain);
    }
    return 0;
}

int qs_cmd_hook(QsLaunchConfig *cfg, char **args)
{
    return hook(cfg, NULL, args);
}

int qs_cmd_hook_unconfigured(const char *config_error, char **args)
{
    g_autoptr(QsLaunchConfig) defaults =
        qs_launch_config_load_data("", NULL, NULL);

    return defaults ? hook(defaults, config_error, args) : 0;
}
