/* SPDX-License-Identifier: GPL-2.0-or-later */
/* attach: checks the domain, binds, makes the ticket, then becomes the
 * monitor (in the background unless --foreground). */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <gio/gio.h>
#include <glib-unix.h>
#include "qs-launch-address.h"
#include "qs-launch-attach.h"
#include "qs-launch-control.h"
#include "qs-launch-libvirt.h"
#include "qs-launch-tokens.h"
#include "qs-launch-log.h"
#include "qs-launch-monitor.h"
#include "qs-launch-pending.h"
#include "qs-launch-run-dir.h"
#include "qs-launch-session.h"
#include "qs-launch-systemd.h"
#include "qs-launch-spawn.h"

/* The domain's lock, waiting until DEADLINE for a previous monitor that is
 * still cleaning up (a quick stop and start through the hook). That monitor
 * unlinks the file while holding it, so a lock taken on an unlinked file
 * does not count: retry on the new one. */
static int take_lock(const char *path, gint64 deadline)
{
    for (;;) {
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        struct stat a, b;

        if (fd < 0) {
            return -1;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            if (fstat(fd, &a) == 0 && stat(path, &b) == 0 &&
                a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
                return fd;
            }
        } else if (g_get_monotonic_time() >= deadline) {
            close(fd);
            return -1;
        } else {
            g_usleep(100 * 1000);
        }
        close(fd);
    }
}


/* The console's ticket: taken from --ticket-file or made; none at all for
 * a proxy-only console, which the helper then serves without a credential
 * (its log and ours say so). */
static gboolean make_ticket(Session *s, const char *name, GError **error)
{
    if (s->cfg->proxy_only) {
        if (s->opts.ticket_file || s->opts.expiry >= 0) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                        "[listen] proxy-only: this console has no ticket "
                        "(--ticket-file and --expires do not apply)");
            return FALSE;
        }
        qs_log_info("proxy-only ([listen] proxy-only=true): no ticket; anyone who "
                    "reaches %s gets this console", s->cfg->listen_address);
        return TRUE;
    }
    s->st->ticket_file = qs_run_path(s->cfg, name, ".ticket");
    if (s->opts.ticket_file) {
        gint64 expiry = 0;

        if (!(s->password = qs_ticket_read_file(s->opts.ticket_file, &expiry, error))) {
            return FALSE;
        }
        s->st->ticket_expiry = expiry;
    } else if (!(s->password = qs_ticket_generate(error))) {
        return FALSE;
    }
    if (s->opts.expiry >= 0) {
        s->st->ticket_expiry = s->opts.expiry;
    } else if (!s->opts.ticket_file && s->cfg->ticket_lifetime_s) {
        s->st->ticket_expiry = g_get_real_time() / G_USEC_PER_SEC +
                               s->cfg->ticket_lifetime_s;
    }
    return TRUE;
}

static gboolean prepare(Session *s, const char *arg, GError **error)
{
    g_autoptr(virConnect) conn = NULL;
    g_autoptr(virDomain) dom = NULL;
    g_autofree char *xml = NULL;
    g_autofree char *log_path = NULL;
    gint64 deadline = g_get_monotonic_time() +
                      (gint64)s->opts.wait_s * G_USEC_PER_SEC;
    const char *name;
    struct stat sb;

    if (g_mkdir_with_parents(s->cfg->run_dir, 0755) < 0 ||
        g_mkdir_with_parents(s->cfg->log_dir, 0750) < 0) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                    "creating %s or %s: %s", s->cfg->run_dir, s->cfg->log_dir,
                    g_strerror(errno));
        return FALSE;
    }
    if (!(conn = qs_virt_connect(s->cfg->uri, error)) ||
        !(dom = qs_virt_lookup(conn, arg, error))) {
        return FALSE;
    }
    while (virDomainIsActive(dom) != 1) {
        if (g_get_monotonic_time() >= deadline) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_CONNECTED,
                        "domain '%s' is not running", arg);
            return FALSE;
        }
        g_usleep(200 * 1000);
    }
    name = virDomainGetName(dom);
    if (!qs_domain_name_ok(name, error) ||
        !(xml = qs_virt_live_xml(dom, error)) ||
        !(s->info = qs_domain_info_parse(xml, error))) {
        return FALSE;
    }
    s->state_path = qs_run_path(s->cfg, name, ".json");
    s->pid_path = qs_run_path(s->cfg, name, ".pid");
    s->lock_path = qs_run_path(s->cfg, name, ".lock");
    s->control_path = qs_run_path(s->cfg, name, ".ctl");
    s->lock_fd = take_lock(s->lock_path, deadline);
    if (s->lock_fd < 0) {
        g_autoptr(QsLaunchState) old = qs_launch_state_load(s->state_path, NULL);

        g_set_error(error, G_IO_ERROR, G_IO_ERROR_EXISTS,
                    "domain '%s' is already attached (helper pid %d): "
                    "detach it first", name, old ? old->helper_pid : 0);
        return FALSE;
    }
    if (s->info->mode == QS_DISPLAY_BUS) {
        /* The per-VM bus admits only its owner (EXTERNAL auth). */
        if (stat(s->info->bus_path, &sb) < 0) {
            g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                        "the domain's D-Bus socket %s: %s", s->info->bus_path,
                        g_strerror(errno));
            return FALSE;
        }
        s->uid = sb.st_uid;
        s->gid = sb.st_gid;
    } else {
        s->uid = s->cfg->helper_uid;
        s->gid = s->cfg->helper_gid;
    }
    if (geteuid() != 0 && s->uid != geteuid()) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                    "the helper must run as uid %u ([helper] user or the "
                    "bus owner) and only root can switch to it",
                    (unsigned)s->uid);
        return FALSE;
    }
    s->st = g_new0(QsLaunchState, 1);
    s->st->domain = g_strdup(name);
    s->st->uuid = g_strdup(s->info->uuid);
    s->st->mode = g_strdup(s->info->mode == QS_DISPLAY_P2P ? "p2p" : "bus");
    s->st->listen = g_strdup(s->cfg->listen_address);
    if (s->cfg->console_host) {
        s->st->host = g_strdup(s->cfg->console_host);
        s->host_from = "[listen] host";
    } else {
        s->st->host = qs_reported_address(s->cfg, &s->host_from);
    }
    s->st->supervise = s->opts.supervise;
    s->st->attached = g_get_real_time() / G_USEC_PER_SEC;
    s->st->log = qs_log_path(s->cfg, name);
    if (!make_ticket(s, name, error)) {
        return FALSE;
    }
    if (s->cfg->tls) {
        s->tls_private = qs_run_path(s->cfg, name, ".tls");
        s->st->tls_dir = g_strdup(s->tls_private);
        if (!qs_tls_prepare(s->cfg->tls_dir, s->tls_private, s->uid, s->gid,
                            error)) {
            return FALSE;
        }
    }
    if (s->cfg->plain &&
        (s->listen_fd = qs_bind_listener(s->cfg->listen_address,
                                         s->cfg->port_min, s->cfg->port_max,
                                         &s->st->port, error)) < 0) {
        return FALSE;
    }
    if (s->cfg->tls &&
        (s->tls_fd = qs_bind_listener(s->cfg->listen_address,
                                      s->cfg->port_min, s->cfg->port_max,
                                      &s->st->tls_port, error)) < 0) {
        return FALSE;
    }
    if ((s->control_fd = qs_control_bind(s->control_path, error)) < 0) {
        return FALSE;
    }
    if (s->password && !qs_ticket_write_file(s->st->ticket_file, s->password,
                                             s->st->ticket_expiry, error)) {
        return FALSE;
    }
    if (s->cfg->token_keys) {
        g_autofree char *text = NULL;

        s->token_keys_path = qs_run_path(s->cfg, name, ".tokens");
        if (!(text = qs_launch_token_keys_write(s->cfg, s->info->uuid, s->token_keys_path,
                                                error))) {
            return FALSE;
        }
        explicit_bzero(text, strlen(text));
    }
    log_path = qs_log_path(s->cfg, name);
    s->log_fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
    if (s->log_fd < 0) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                    "%s: %s", log_path, g_strerror(errno));
        return FALSE;
    }
    return TRUE;
}

/* Nobody reads a hook-started launcher's error (libvirtd drops a hook's
 * output): it is kept where 'status' finds it. MSG NULL: the unit's
 * launcher is attaching (its pid replaces the hook's queued record). */
static void record_pending(Session *s, const char *domain, const char *msg)
{
    /* Under the unit, DOMAIN is the instance systemd gave us. */
    g_autofree char *unit = s->opts.systemd ?
                            g_strconcat("qemu-spice@", domain, ".service", NULL) : NULL;
    QsPending rec = {
        .failed = msg != NULL,
        .pid = getpid(),
        .since = g_get_real_time() / G_USEC_PER_SEC,
        .error = (char *)msg,
        .unit = unit,
    };

    if ((s->opts.hook || s->opts.systemd) && qs_domain_name_ok(domain, NULL)) {
        qs_pending_save(s->cfg, s->st ? s->st->domain : domain, &rec, NULL);
    }
}

/* Fork the monitor; the parent waits for its one-line verdict. */
static int daemonize(int *report_fd)
{
    int p[2];
    pid_t pid;
    char buf[1024];
    ssize_t n;
    GString *msg = g_string_new(NULL);
    int status = 1;

    if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
        qs_log_error("fork: %s", g_strerror(errno));
        exit(1);
    }
    if (pid == 0) {
        int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);

        close(p[0]);
        setsid();
        if (null_fd >= 0) {
            dup2(null_fd, 0);
            dup2(null_fd, 1);
            dup2(null_fd, 2);
            close(null_fd);
        }
        *report_fd = p[1];
        g_string_free(msg, TRUE);
        return 0;
    }
    close(p[1]);
    while ((n = read(p[0], buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 || msg->len > 65536) {
            break;
        }
        g_string_append_len(msg, buf, n);
    }
    if (msg->len > 1 && msg->str[0] == '0') {
        status = 0;
        fputs(msg->str + 1, stdout);
    } else if (msg->len > 1) {
        fprintf(stderr, "qemu-spice-launcher: %s", msg->str + 1);
    } else {
        fprintf(stderr, "qemu-spice-launcher: the launcher's monitor died "
                "while attaching (see syslog)\n");
    }
    fflush(stdout);
    _exit(status);
}

/* The verdict: to the waiting parent (fd), else here. A success is logged
 * too, but in the foreground only to the log file: standard output carries
 * it, and under systemd that is the same journal as standard error or
 * syslog. */
static void report(int fd, gboolean ok, const char *text)
{
    if (fd >= 0) {
        g_autofree char *line = g_strdup_printf("%c%s\n", ok ? '0' : '1', text);
        ssize_t n;

        if (ok) {
            qs_log_info("%s", text);
        }
        n = write(fd, line, strlen(line));
        (void)n;
        close(fd);
    } else if (ok) {
        qs_log_file_only("%s", text);
        printf("%s\n", text);
        fflush(stdout);
    } else {
        qs_log_error("%s", text);
    }
}

int qs_attach(QsLaunchConfig *cfg, const char *domain,
              const QsAttachOptions *opts)
{
    g_autoptr(Session) s = g_new0(Session, 1);
    g_autoptr(GError) err = NULL;
    g_autofree char *summary = NULL;
    int report_fd = -1;

    s->cfg = cfg;
    s->opts = *opts;
    s->listen_fd = s->tls_fd = s->control_fd = s->lock_fd = s->log_fd = -1;
    s->loop = g_main_loop_new(NULL, FALSE);
    if (opts->syslog) {
        qs_log_use_syslog(domain);
    }
    if (opts->systemd) {
        record_pending(s, domain, NULL);
    }
    if (!prepare(s, domain, &err)) {
        report(-1, FALSE, err->message);
        if (s->st) {
            qs_session_remove_local_files(s);  /* we hold the lock: nothing else runs */
        }
        record_pending(s, domain, err->message);
        return 1;
    }
    if (!opts->foreground) {
        daemonize(&report_fd);
        qs_log_use_syslog(s->st->domain);
    }
    qs_log_also_to_fd(s->log_fd);
    s->st->monitor_pid = getpid();
    qs_session_watch_signals(s);  /* before the state file names our pid */
    /* On failure the verdict goes out after the cleanup, so that whoever
     * waits for it finds nothing left behind. */
    if (!qs_session_start_first(s, &err)) {
        if (s->helper > 0) {
            kill(s->helper, SIGKILL);
        }
        qs_session_cleanup(s);
        record_pending(s, domain, err->message);
        report(report_fd, FALSE, err->message);
        return 1;
    }
    if (!qs_session_write_state(s, &err) || !qs_session_publish(s, TRUE, &err)) {
        s->stopping = TRUE;
        qs_session_stop_helper(s);
        g_main_loop_run(s->loop);
        qs_session_cleanup(s);
        record_pending(s, domain, err->message);
        report(report_fd, FALSE, err->message);
        return 1;
    }
    /* Attached: whatever the hook recorded (starting, or an earlier
     * failure) is over. */
    qs_pending_remove(cfg, s->st->domain, 0);
    summary = g_strdup_printf("%s: SPICE console on %s%s%.0u%s%.0u, helper "
                              "pid %d%s", s->st->domain, s->st->host,
                              s->st->port ? " port " : "", s->st->port,
                              s->st->tls_port ? " tls-port " : "",
                              s->st->tls_port, s->helper,
                              opts->supervise ? " (supervised)" : "");
    report(report_fd, TRUE, summary);
    /* Said once the attach succeeded: a failed one is one line. */
    qs_log_info("console address %s: %s", s->st->host, s->host_from);
    return qs_session_run(s);
}
