/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The monitor: a launcher process stays beside each helper, holds its
 * listening sockets and lock, restarts it when asked to or when it fails,
 * and removes the console (state files, metadata) when it ends. */

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <gio/gio.h>
#include <glib-unix.h>
#include "qs-launch-control.h"
#include "qs-launch-libvirt.h"
#include "qs-launch-log.h"
#include "qs-launch-monitor.h"
#include "qs-launch-ports.h"
#include "qs-launch-run-dir.h"
#include "qs-launch-spawn.h"
#include "qs-launch-tokens.h"

#define STOP_GRACE_MS 5000
#define ALIVE_CHECK_MS 300
#define STABLE_RUN_S 60

static int open_display(Session *s, GError **error)
{
    g_autoptr(virConnect) conn = NULL;
    g_autoptr(virDomain) dom = NULL;
    g_autoptr(GError) err = NULL;
    gint64 deadline = g_get_monotonic_time() + (gint64)s->opts.wait_s * G_USEC_PER_SEC;

    if (s->info->mode == QS_DISPLAY_BUS) {
        return -1;
    }
    /* Right after the 'started' hook libvirt still holds the domain's job;
     * OpenGraphicsFD then waits or fails, so it is retried until the
     * deadline. */
    for (;;) {
        int fd;

        g_clear_error(&err);
        if (!conn) {
            conn = qs_virt_connect(s->cfg->uri, &err);
        }
        if (conn && !dom) {
            dom = qs_virt_lookup(conn, s->info->uuid, &err);
        }
        if (dom) {
            fd = qs_virt_open_graphics(dom, s->info->graphics_index, &err);
            if (fd >= 0) {
                return fd;
            }
            if (virDomainIsActive(dom) == 0) {
                break;  /* it stopped meanwhile: no point in waiting */
            }
        }
        if (g_get_monotonic_time() >= deadline) {
            break;
        }
        g_usleep(500 * 1000);
    }
    g_propagate_error(error, g_steal_pointer(&err));
    return -1;
}

static void on_child_exit(GPid pid, int status, gpointer data);

static gboolean spawn(Session *s, GError **error)
{
    /* set-ticket --rights view left one for a restarted helper. */
    g_autofree char *view = qs_view_ticket_path(s->cfg, s->st->domain);
    int display_fd = open_display(s, error);
    QsSpawnPort ports[QS_SPAWN_MAX_CHARDEVS];
    /* Each start connects (and listens) anew: the previous helper's
     * connections closed with it, and qemu takes the next one. */
    guint n_ports = display_fd >= 0 || s->info->mode == QS_DISPLAY_BUS
                        ? qs_launch_open_smartcard(
                              s->info, ports,
                              qs_launch_open_redirdevs(s->info, ports,
                                                       qs_launch_open_ports(s->info, ports)))
                        : 0;
    QsSpawnSpec spec = {
        .helper_path = s->cfg->helper_path,
        .display_fd = display_fd,
        .bus_address = s->info->bus_address,
        .vm = s->info->uuid,
        .listen_fd = s->listen_fd,
        .tls_listen_fd = s->tls_fd,
        .control_fd = s->control_fd,
        .tls_dir = s->tls_private,
        .token_keys_file = s->token_keys_path,
        .view_ticket_file = g_file_test(view, G_FILE_TEST_EXISTS) ? view : NULL,
        .secure_channels = s->cfg->secure_channels,
        .max_sessions = s->cfg->max_sessions,
        .when_full = s->cfg->when_full,
        .max_fps = s->cfg->max_fps,
        .no_console_page = !s->cfg->console_page,
        .password = s->password,
        .ticket_expiry = s->st->ticket_expiry,
        .uid = s->uid,
        .gid = s->gid,
        /* Under systemd the unit's journal stream, whose identifier names
         * the domain on every line; the log file keeps the launcher's. */
        .log_fd = s->opts.systemd ? STDERR_FILENO : s->log_fd,
        .ports = ports,
        .n_ports = n_ports,
    };
    pid_t pid;

    if (s->info->mode == QS_DISPLAY_P2P && display_fd < 0) {
        return FALSE;
    }
    if (s->tls_private &&
        !qs_tls_prepare(s->cfg->tls_dir, s->tls_private, s->uid, s->gid,
                        error)) {
        if (display_fd >= 0) {
            close(display_fd);
        }
        qs_launch_close_ports(ports, n_ports);
        return FALSE;
    }
    pid = qs_spawn_helper(&spec, error);
    if (display_fd >= 0) {
        close(display_fd);  /* the helper holds it now */
    }
    qs_launch_close_ports(ports, n_ports);
    if (pid < 0) {
        return FALSE;
    }
    s->helper = pid;
    s->st->helper_pid = pid;
    s->st->started = g_get_real_time() / G_USEC_PER_SEC;
    s->child_watch = g_child_watch_add(pid, on_child_exit, s);
    return TRUE;
}

static gboolean domain_active(Session *s)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(virConnect) conn = qs_virt_connect(s->cfg->uri, &err);
    g_autoptr(virDomain) dom = NULL;

    if (!conn) {
        return TRUE;  /* unknown: libvirtd may be restarting; keep trying */
    }
    dom = qs_virt_lookup(conn, s->info->uuid, &err);
    return dom && virDomainIsActive(dom) == 1;
}

static gboolean do_restart(gpointer data)
{
    Session *s = data;
    g_autoptr(GError) err = NULL;

    s->restart_timer = 0;
    if (s->stopping) {
        return G_SOURCE_REMOVE;
    }
    if (!domain_active(s)) {
        qs_log_info("domain %s is no longer running: detaching", s->st->domain);
        g_main_loop_quit(s->loop);
        return G_SOURCE_REMOVE;
    }
    if (!spawn(s, &err)) {
        qs_log_error("restarting the helper: %s", err->message);
        s->backoff_s = MIN(MAX(s->backoff_s * 2, 1u), s->cfg->backoff_max_s);
        s->restart_timer = g_timeout_add_seconds(s->backoff_s, do_restart, s);
        return G_SOURCE_REMOVE;
    }
    s->st->restarts++;
    qs_log_info("helper restarted, pid %d (restart %u)", s->helper,
                s->st->restarts);
    if (!qs_session_write_state(s, &err) || !qs_session_publish(s, TRUE, &err)) {
        qs_log_error("updating the reported console: %s", err->message);
    }
    return G_SOURCE_REMOVE;
}

static void on_child_exit(GPid pid, int status, gpointer data)
{
    Session *s = data;
    gboolean abnormal = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    gint64 ran = g_get_real_time() / G_USEC_PER_SEC - s->st->started;

    g_spawn_close_pid(pid);
    s->child_watch = 0;
    s->helper = 0;
    g_clear_handle_id(&s->kill_timer, g_source_remove);
    if (WIFSIGNALED(status)) {
        qs_log_info("helper %d killed by signal %d", pid, WTERMSIG(status));
    } else {
        qs_log_info("helper %d exited with status %d", pid, WEXITSTATUS(status));
    }
    if (s->stopping || s->starting) {
        s->start_status = status;
        g_main_loop_quit(s->loop);
        return;
    }
    if (!domain_active(s)) {
        qs_log_info("domain %s is no longer running: detaching", s->st->domain);
        g_main_loop_quit(s->loop);
        return;
    }
    if (!abnormal || !s->opts.supervise) {
        s->exit_status = abnormal ? 1 : 0;
        g_main_loop_quit(s->loop);
        return;
    }
    s->backoff_s = ran >= STABLE_RUN_S ? 1
                 : MIN(MAX(s->backoff_s * 2, 1u), s->cfg->backoff_max_s);
    qs_log_info("restarting the helper in %u s", s->backoff_s);
    s->restart_timer = g_timeout_add_seconds(s->backoff_s, do_restart, s);
}

static gboolean on_kill_timer(gpointer data)
{
    Session *s = data;

    s->kill_timer = 0;
    if (s->helper > 0) {
        qs_log_error("helper %d ignored SIGTERM: killing it", s->helper);
        kill(s->helper, SIGKILL);
    }
    return G_SOURCE_REMOVE;
}

void qs_session_stop_helper(Session *s)
{
    if (s->helper > 0) {
        kill(s->helper, SIGTERM);
        if (!s->kill_timer) {
            s->kill_timer = g_timeout_add(STOP_GRACE_MS, on_kill_timer, s);
        }
    }
}

static gboolean on_sigterm(gpointer data)
{
    Session *s = data;

    if (s->stopping) {
        return G_SOURCE_CONTINUE;  /* 'stopped' and 'release' both signal */
    }
    qs_log_info("detaching %s", s->st->domain);
    s->stopping = TRUE;
    g_clear_handle_id(&s->restart_timer, g_source_remove);
    if (s->helper > 0) {
        qs_session_stop_helper(s);
    } else {
        g_main_loop_quit(s->loop);
    }
    return G_SOURCE_CONTINUE;
}

/* set-ticket: the command gave the running helper its new ticket over the
 * control socket and wrote it to the ticket file; a helper started later
 * (a restart) must get the same one. */
static gboolean on_sigusr1(gpointer data)
{
    Session *s = data;
    g_autoptr(GError) err = NULL;
    gint64 expiry = 0;
    char *pw = s->st->ticket_file ? qs_ticket_read_file(s->st->ticket_file, &expiry, &err)
                                  : NULL;

    if (!s->st->ticket_file) {
        return G_SOURCE_CONTINUE;   /* proxy-only: no ticket */
    }
    if (!pw) {
        qs_log_error("set-ticket: %s", err->message);
        return G_SOURCE_CONTINUE;
    }
    explicit_bzero(s->password, strlen(s->password));
    g_free(s->password);
    s->password = pw;
    s->st->ticket_expiry = expiry;
    /* The metadata first: set-ticket returns when the state file has the
     * new expiry, and what libvirt reports must be new by then. */
    if (!qs_session_publish(s, TRUE, &err)) {
        qs_log_error("set-ticket: %s", err->message);
        g_clear_error(&err);
    }
    if (!qs_session_write_state(s, &err)) {
        qs_log_error("set-ticket: %s", err->message);
    }
    qs_log_info("ticket changed");
    return G_SOURCE_CONTINUE;
}

/* SIGHUP, token keys: derived again from the master key file (rotation),
 * into the helper's file (for restarts) and the running helper. */
static void reload_token_keys(Session *s)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(GDBusConnection) conn = NULL;
    g_autofree char *text = NULL;

    if (!(text = qs_launch_token_keys_write(s->cfg, s->info->uuid, s->token_keys_path,
                                            &err))) {
        qs_log_error("reloading token keys: %s", err->message);
        return;
    }
    if (s->helper > 0 &&
        (!(conn = qs_control_connect(s->control_path, &err)) ||
         !qs_control_set_token_keys(conn, text, &err))) {
        qs_log_error("reloading token keys: %s", err->message);
    } else {
        qs_log_info("token keys reloaded from %s", s->cfg->token_keys);
    }
    explicit_bzero(text, strlen(text));
}

/* SIGHUP: fresh certificates into the helper's copy (for restarts), and to
 * the running helper over its control socket: a confined helper cannot
 * open files. */
static gboolean on_sighup(gpointer data)
{
    Session *s = data;
    g_autoptr(GError) err = NULL;
    g_autoptr(GDBusConnection) conn = NULL;

    if (s->token_keys_path) {
        reload_token_keys(s);
    }
    if (!s->tls_private) {
        qs_log_info("SIGHUP: no TLS listener, no certificates to reload");
        return G_SOURCE_CONTINUE;
    }
    if (!qs_tls_prepare(s->cfg->tls_dir, s->tls_private, s->uid, s->gid,
                        &err)) {
        qs_log_error("reloading certificates: %s", err->message);
        return G_SOURCE_CONTINUE;
    }
    if (s->helper <= 0) {
        return G_SOURCE_CONTINUE;   /* the next helper starts with them */
    }
    if (!(conn = qs_control_connect(s->control_path, &err)) ||
        !qs_control_set_certificates(conn, s->tls_private, &err)) {
        qs_log_error("reloading certificates: %s", err->message);
        return G_SOURCE_CONTINUE;
    }
    qs_log_info("certificates reloaded from %s", s->cfg->tls_dir);
    return G_SOURCE_CONTINUE;
}

static char *last_log_line(Session *s)
{
    g_autofree char *path = qs_log_path(s->cfg, s->st->domain);
    g_autofree char *text = NULL;
    g_auto(GStrv) lines = NULL;
    guint n;

    /* Under systemd the helper's words are in the journal, just above. */
    if (s->opts.systemd || !g_file_get_contents(path, &text, NULL, NULL)) {
        return g_strdup("");
    }
    lines = g_strsplit(g_strchomp(text), "\n", -1);
    n = g_strv_length(lines);
    for (guint i = n; i > 0; i--) {
        /* skip our own lines and GOption's "Try '... --help'" epilogue */
        if (*lines[i - 1] && !strstr(lines[i - 1], " launcher: ") &&
            !g_str_has_prefix(lines[i - 1], "Try '")) {
            return g_strdup(lines[i - 1]);
        }
    }
    return g_strdup("");
}

static gboolean quit_loop(gpointer data)
{
    g_main_loop_quit(data);
    return G_SOURCE_REMOVE;
}

/* Starts the first helper and checks it survives its start-up. */
gboolean qs_session_start_first(Session *s, GError **error)
{
    g_autoptr(GSource) t = NULL;

    if (!spawn(s, error)) {
        return FALSE;
    }
    s->starting = TRUE;
    s->start_status = -1;
    t = g_timeout_source_new(ALIVE_CHECK_MS);
    g_source_set_callback(t, quit_loop, s->loop, NULL);
    g_source_attach(t, NULL);
    g_main_loop_run(s->loop);
    s->starting = FALSE;
    /* Whichever ended the wait (the timer, or the helper's exit), the
     * timer must not fire later. */
    g_source_destroy(t);
    if (s->start_status == -1) {
        return TRUE;
    }
    {
        g_autofree char *last = last_log_line(s);
        int st = s->start_status;

        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "the helper %s at once (%s %d)%s%s",
                    WIFSIGNALED(st) ? "was killed" : "exited",
                    WIFSIGNALED(st) ? "signal" : "status",
                    WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
                    *last ? "; its last words: " : "", last);
    }
    return FALSE;
}

void qs_session_watch_signals(Session *s)
{
    s->signals[0] = g_unix_signal_add(SIGTERM, on_sigterm, s);
    s->signals[1] = g_unix_signal_add(SIGINT, on_sigterm, s);
    s->signals[2] = g_unix_signal_add(SIGUSR1, on_sigusr1, s);
    s->signals[3] = g_unix_signal_add(SIGHUP, on_sighup, s);
}

int qs_session_run(Session *s)
{
    g_main_loop_run(s->loop);
    if (s->helper > 0) {
        s->stopping = TRUE;
        qs_session_stop_helper(s);
        g_main_loop_run(s->loop);
    }
    g_clear_handle_id(&s->restart_timer, g_source_remove);
    /* The signal handlers stay installed: a late SIGTERM (the hook's
     * 'release' after 'stopped') must not kill us halfway through cleanup. */
    s->stopping = TRUE;
    qs_session_cleanup(s);
    qs_log_info("%s detached", s->st->domain);
    return s->exit_status;
}
