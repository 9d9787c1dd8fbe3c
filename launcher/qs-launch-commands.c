/* SPDX-License-Identifier: GPL-2.0-or-later */
/* detach, reload, console and disconnect: they act on the state files,
 * signal the monitor that owns a helper or ask the helper itself. */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <gio/gio.h>
#include "qs-launch-address.h"
#include "qs-launch-cert.h"
#include "qs-launch-commands.h"
#include "qs-launch-control.h"
#include "qs-launch-domain.h"
#include "qs-launch-format.h"
#include "qs-launch-libvirt.h"
#include "qs-launch-log.h"
#include "qs-launch-qr.h"
#include "qs-launch-rights.h"
#include "qs-launch-run-dir.h"
#include "qs-launch-spawn.h"

#define DETACH_WAIT_S 15

/* The monitor died without cleaning up (SIGKILL, crash): do its part. */
static void clean_orphan(QsLaunchConfig *cfg, QsLaunchState *st)
{
    const char *suffixes[] = { ".json", ".pid", ".ticket", ".view-ticket", ".tokens", ".ctl",
                               ".lock" };
    g_autoptr(GError) err = NULL;
    g_autoptr(virConnect) conn = NULL;
    g_autoptr(virDomain) dom = NULL;

    if (qs_pid_alive(st->helper_pid)) {
        g_autofree char *exe_link = g_strdup_printf("/proc/%d/exe", st->helper_pid);
        g_autofree char *exe = g_file_read_link(exe_link, NULL);

        if (exe && strcmp(exe, cfg->helper_path) == 0) {
            kill(st->helper_pid, SIGKILL);
        }
    }
    if ((conn = qs_virt_connect(cfg->uri, &err)) &&
        (dom = qs_virt_lookup(conn, st->uuid ? st->uuid : st->domain, &err))) {
        g_autofree char *xml = qs_virt_live_xml(dom, NULL);
        gboolean optin = xml && qs_domain_xml_opts_in(xml, NULL, NULL);
        QsConsoleMeta keep = { .autostart = optin };

        qs_virt_set_console_metadata(dom, &keep, &err);
    }
    if (err) {
        qs_log_error("removing the console metadata: %s", err->message);
    }
    for (guint i = 0; i < G_N_ELEMENTS(suffixes); i++) {
        g_autofree char *p = qs_run_path(cfg, st->domain, suffixes[i]);

        unlink(p);
    }
    if (st->tls_dir) {
        const char *f[] = { "server-cert.pem", "server-key.pem", "ca-cert.pem" };

        for (guint i = 0; i < G_N_ELEMENTS(f); i++) {
            g_autofree char *p = g_build_filename(st->tls_dir, f[i], NULL);

            unlink(p);
        }
        rmdir(st->tls_dir);
    }
}

int qs_cmd_detach(QsLaunchConfig *cfg, const char *domain, gboolean wait)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(QsLaunchState) st = qs_find_state(cfg, domain, &err);
    gint64 deadline;

    if (!st) {
        qs_log_error("detach: %s", err->message);
        return 1;
    }
    if (!qs_domain_locked(cfg, st->domain) || !qs_pid_alive(st->monitor_pid)) {
        clean_orphan(cfg, st);
        printf("%s: detached (its launcher had gone; cleaned up)\n", st->domain);
        return 0;
    }
    if (kill(st->monitor_pid, SIGTERM) < 0) {
        qs_log_error("detach: signalling the launcher pid %d: %s",
                     st->monitor_pid, g_strerror(errno));
        return 1;
    }
    if (!wait) {
        return 0;
    }
    deadline = g_get_monotonic_time() + DETACH_WAIT_S * G_USEC_PER_SEC;
    while (qs_domain_locked(cfg, st->domain)) {
        if (g_get_monotonic_time() > deadline) {
            qs_log_error("detach: the launcher pid %d did not finish in %d s",
                         st->monitor_pid, DETACH_WAIT_S);
            return 1;
        }
        g_usleep(50 * 1000);
    }
    printf("%s: detached\n", st->domain);
    return 0;
}

/* The password a format carries: a fresh single-use token for a link, and
 * for a .vv when the console takes tokens (nothing long-lived leaves the
 * host); else the view-only password or the ticket. Sets what the formats
 * report about it in `st`. */
static char *console_password(QsLaunchConfig *cfg, QsLaunchState *st, QsConsoleFormat fmt,
                              gboolean view, gint ttl_s, GError **error)
{
    gint64 expiry = 0;
    char *password = NULL;

    if (fmt == QS_FORMAT_URL || (fmt == QS_FORMAT_VV && qs_console_takes_tokens(cfg, st))) {
        if (!(password = qs_console_token(cfg, st, view, ttl_s, &expiry, error))) {
            return NULL;
        }
        st->ticket_expiry = expiry;
        g_free(st->ticket_file);
        st->ticket_file = g_strdup("a single-use signed token");
        return password;
    }
    if (view) {
        char *source = NULL;

        if (!(password = qs_view_password(cfg, st, ttl_s, &expiry, &source, error))) {
            return NULL;
        }
        /* The formats report what was handed out: its expiry and file. */
        st->ticket_expiry = expiry;
        g_free(st->ticket_file);
        st->ticket_file = source;
        return password;
    }
    /* A proxy-only console has no ticket: the formats leave it out. */
    if (st->ticket_file && !(password = qs_ticket_read_file(st->ticket_file, &expiry, error))) {
        g_prefix_error(error, "the ticket: ");
    }
    return password;
}

/* A TLS console's CA (libvirt's directory, [listen] tls-dir) and the
 * subject of the certificate its helper serves, for the viewer to check. */
static gboolean console_tls(QsLaunchConfig *cfg, const QsLaunchState *st, QsConsoleFormat fmt,
                            char **ca, char **subject, GError **error)
{
    g_autofree char *ca_path = g_build_filename(cfg->tls_dir, "ca-cert.pem", NULL);
    g_autofree char *cert = g_build_filename(st->tls_dir ? st->tls_dir : cfg->tls_dir,
                                             "server-cert.pem", NULL);

    if (!st->tls_port) {
        return TRUE;
    }
    g_file_get_contents(ca_path, ca, NULL, NULL);
    *subject = qs_cert_subject(cert, fmt == QS_FORMAT_VV ? error : NULL);
    return *subject || fmt != QS_FORMAT_VV;
}

int qs_cmd_reload(QsLaunchConfig *cfg, const char *domain)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(QsLaunchState) st = qs_find_state(cfg, domain, &err);

    if (!st) {
        qs_log_error("reload: %s", err->message);
        return 1;
    }
    if (!qs_domain_locked(cfg, st->domain) || !qs_pid_alive(st->monitor_pid)) {
        qs_log_error("reload: the launcher of '%s' is gone (a stale state file: 'detach' "
                     "removes it)", st->domain);
        return 1;
    }
    if (kill(st->monitor_pid, SIGHUP) < 0) {
        qs_log_error("reload: signalling the launcher (pid %d): %s", st->monitor_pid,
                     g_strerror(errno));
        return 1;
    }
    printf("%s: the launcher (pid %d) reloads the certificates and token keys; its log "
           "says 'certificates reloaded' and 'token keys reloaded', or why not\n",
           st->domain, st->monitor_pid);
    return 0;
}

int qs_cmd_console(QsLaunchConfig *cfg, const char *domain, const char *format,
                   const char *rights, gint ttl_s, gboolean qr)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(QsLaunchState) st = NULL;
    g_autofree char *password = NULL;
    g_autofree char *ca = NULL;
    g_autofree char *subject = NULL;
    g_autofree char *text = NULL;
    g_autofree char *code = NULL;
    g_autofree char *address = NULL;
    const char *address_from = NULL;
    QsConsoleFormat fmt;

    /* One error at a time: a bad format is reported before the lookup. */
    if (!qs_console_format_parse(format, &fmt, &err) ||
        !(st = qs_find_state(cfg, domain, &err))) {
        qs_log_error("console: %s", err->message);
        return 1;
    }
    if (qr && fmt != QS_FORMAT_URL) {
        qs_log_error("console: --qr goes with --format url");
        return 2;
    }
    /* A state file whose launcher holds no lock is left from a launcher
     * that was killed or a host that went down (when the run directory is
     * not a tmpfs): its pids may name other processes by now. */
    if (!qs_domain_locked(cfg, st->domain) || !qs_pid_alive(st->monitor_pid)) {
        qs_log_error("console: the launcher of '%s' is gone, so is its "
                     "console (a stale state file: 'detach' removes it)",
                     st->domain);
        return 1;
    }
    if (!qs_pid_alive(st->helper_pid)) {
        qs_log_error("console: the helper of '%s' (pid %d) is not running",
                     st->domain, st->helper_pid);
        return 1;
    }
    if ((!(password = console_password(cfg, st, fmt, rights && strcmp(rights, "view") == 0,
                                       ttl_s, &err)) && err) ||
        !console_tls(cfg, st, fmt, &ca, &subject, &err) ||
        (fmt == QS_FORMAT_KERBSIDE &&
         !(address = qs_console_address(st, &address_from, &err)))) {
        if (password) {
            explicit_bzero(password, strlen(password));
        }
        qs_log_error("console: %s", err->message);
        return 1;
    }
    {
        QsConsoleInfo info = {
            .state = st,
            .password = password,
            .ca_cert = ca,
            .host_subject = subject,
            .hypervisor = g_get_host_name(),
            .hypervisor_ip = address,
            .hypervisor_ip_from = address_from,
        };

        text = qs_console_format(&info, fmt, &err);
    }
    if (text && qr) {
        g_autofree char *link = g_strchomp(g_strdup(text));

        code = qs_qr_render(link, isatty(STDOUT_FILENO), &err);
        explicit_bzero(link, strlen(link));
    }
    if (password) {
        explicit_bzero(password, strlen(password));
    }
    if (!text || (qr && !code)) {
        qs_log_error("console: %s", err->message);
        return 1;
    }
    fputs(text, stdout);
    if (code) {
        fputs(code, stdout);
        explicit_bzero(code, strlen(code));
    }
    explicit_bzero(text, strlen(text));
    return 0;
}

int qs_cmd_disconnect(QsLaunchConfig *cfg, const char *domain, const char *address)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(QsLaunchState) st = qs_find_state(cfg, domain, &err);
    g_autoptr(GDBusConnection) conn = NULL;
    g_autofree char *ctl = NULL;

    if (!st) {
        qs_log_error("disconnect: %s", err->message);
        return 1;
    }
    ctl = qs_run_path(cfg, st->domain, ".ctl");
    if (!(conn = qs_control_connect(ctl, &err)) ||
        !qs_control_disconnect_client(conn, address, &err)) {
        qs_log_error("disconnect: %s", err->message);
        return 1;
    }
    printf("%s: the viewer at %s was disconnected\n", st->domain, address);
    return 0;
}
