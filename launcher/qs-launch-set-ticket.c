/* SPDX-License-Identifier: GPL-2.0-or-later */
/* set-ticket: a new ticket, or view-only ticket, for the running helper
 * and the file a restarted helper reads it from (qs-launch-set-ticket.h). */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <gio/gio.h>
#include "qs-launch-control.h"
#include "qs-launch-log.h"
#include "qs-launch-run-dir.h"
#include "qs-launch-set-ticket.h"
#include "qs-launch-spawn.h"

gboolean qs_parse_when(const char *s, gint64 now, gint64 *out, GError **error)
{
    gint64 v = 0;

    if (strcmp(s, "never") == 0) {
        *out = 0;
        return TRUE;
    }
    if (s[0] == '@' &&
        g_ascii_string_to_signed(s + 1, 10, 1, G_MAXINT64, &v, NULL)) {
        *out = v;
        return TRUE;
    }
    if (g_ascii_string_to_signed(s[0] == '+' ? s + 1 : s, 10, 1,
                                 G_MAXINT32, &v, NULL)) {
        *out = now + v;
        return TRUE;
    }
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--expires '%s': not never, SECONDS, +SECONDS or @UNIX_SECONDS",
                s);
    return FALSE;
}

/* Either ticket's first steps: the running console of DOMAIN (not
 * proxy-only) and the new password (from `ticket_file` or made) with its
 * expiry; NULL after one logged line. */
static QsLaunchState *ticket_command_start(QsLaunchConfig *cfg, const char *domain,
                                           const char *ticket_file, const char *expires,
                                           char **password, gint64 *expiry)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(QsLaunchState) st = qs_find_state(cfg, domain, &err);
    gint64 now = g_get_real_time() / G_USEC_PER_SEC;

    *expiry = cfg->ticket_lifetime_s ? now + cfg->ticket_lifetime_s : 0;
    if (!st) {
        qs_log_error("set-ticket: %s", err->message);
        return NULL;
    }
    if (!qs_domain_locked(cfg, st->domain) || !qs_pid_alive(st->monitor_pid)) {
        qs_log_error("set-ticket: the launcher of '%s' is gone: detach and "
                     "attach again", st->domain);
        return NULL;
    }
    if (!st->ticket_file) {
        qs_log_error("set-ticket: '%s' is a proxy-only console ([listen] proxy-only): "
                     "it has no ticket, and every viewer has control", st->domain);
        return NULL;
    }
    *password = ticket_file ? qs_ticket_read_file(ticket_file, expiry, &err)
                            : qs_ticket_generate(&err);
    if (!*password || (expires && !qs_parse_when(expires, now, expiry, &err))) {
        qs_log_error("set-ticket: %s", err->message);
        if (*password) {
            explicit_bzero(*password, strlen(*password));
            g_clear_pointer(password, g_free);
        }
        return NULL;
    }
    return g_steal_pointer(&st);
}

/* How long the command waits for the monitor to publish the new expiry:
 * a signal handled on its main loop, one libvirt call and a file. */
#define PUBLISH_WAIT_S 10

/* The monitor has taken the new ticket when its state file holds the new
 * expiry: it writes that after libvirt's metadata, so once this returns,
 * `virsh metadata`, `console` and `status` all tell the new one. (With
 * the expiry unchanged, what they tell is unchanged too.) */
static gboolean wait_published(QsLaunchConfig *cfg, const char *domain, int monitor_pid,
                               gint64 expiry, GError **error)
{
    gint64 deadline = g_get_monotonic_time() + PUBLISH_WAIT_S * G_USEC_PER_SEC;

    for (;;) {
        g_autoptr(QsLaunchState) now = qs_find_state(cfg, domain, NULL);

        if (now && now->ticket_expiry == expiry && now->monitor_pid == monitor_pid) {
            return TRUE;
        }
        if (!qs_pid_alive(monitor_pid)) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_CONNECTED,
                        "the launcher (pid %d) exited before it took the new ticket: "
                        "the helper has it; libvirt's metadata may still show the old "
                        "expiry", monitor_pid);
            return FALSE;
        }
        if (g_get_monotonic_time() > deadline) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                        "the launcher (pid %d) did not take the new ticket within %d s: "
                        "the helper has it; libvirt's metadata may still show the old "
                        "expiry", monitor_pid, PUBLISH_WAIT_S);
            return FALSE;
        }
        g_usleep(20 * 1000);
    }
}

int qs_cmd_set_ticket(QsLaunchConfig *cfg, const char *domain,
                      const char *ticket_file, const char *expires,
                      gboolean disconnect)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(GDBusConnection) conn = NULL;
    g_autofree char *password = NULL;
    g_autofree char *ctl = NULL;
    gint64 expiry;
    g_autoptr(QsLaunchState) st = ticket_command_start(cfg, domain, ticket_file, expires,
                                                      &password, &expiry);
    guint kept = 0;
    gboolean ok;

    if (!st) {
        return 1;
    }
    /* The running helper first: if it refuses, the file keeps the ticket
     * that is in force. */
    ctl = qs_run_path(cfg, st->domain, ".ctl");
    ok = (conn = qs_control_connect(ctl, &err)) &&
         qs_control_set_ticket(conn, password, expiry, disconnect, &kept,
                               &err) &&
         qs_ticket_write_file(st->ticket_file, password, expiry, &err);
    explicit_bzero(password, strlen(password));
    if (!ok) {
        qs_log_error("set-ticket: %s", err->message);
        return 1;
    }
    /* The monitor re-reads the file so a restarted helper keeps it. */
    if (kill(st->monitor_pid, SIGUSR1) < 0) {
        qs_log_error("set-ticket: signalling the launcher (pid %d): %s",
                     st->monitor_pid, g_strerror(errno));
        return 1;
    }
    if (!wait_published(cfg, st->domain, st->monitor_pid, expiry, &err)) {
        qs_log_error("set-ticket: %s", err->message);
        return 1;
    }
    if (kept == 1) {
        printf("%s: new ticket in %s; the connected viewer was kept (it linked with the old "
               "ticket; new links need the new one)\n", st->domain, st->ticket_file);
    } else if (kept) {
        printf("%s: new ticket in %s; the %u connected viewers were kept (they linked with "
               "the old ticket; new links need the new one)\n", st->domain, st->ticket_file,
               kept);
    } else {
        printf("%s: new ticket in %s; %s\n", st->domain, st->ticket_file,
               disconnect ? "any connected viewer was disconnected" : "no viewer was connected");
    }
    return 0;
}

int qs_cmd_set_view_ticket(QsLaunchConfig *cfg, const char *domain,
                           const char *ticket_file, const char *expires)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(GDBusConnection) conn = NULL;
    g_autofree char *password = NULL;
    g_autofree char *path = NULL;
    g_autofree char *ctl = NULL;
    gint64 expiry;
    g_autoptr(QsLaunchState) st = ticket_command_start(cfg, domain, ticket_file, expires,
                                                      &password, &expiry);
    gboolean ok;

    if (!st) {
        return 1;
    }
    /* The running helper first (it refuses the control ticket's password);
     * then the file, which the monitor passes to a restarted helper. */
    ctl = qs_run_path(cfg, st->domain, ".ctl");
    path = qs_view_ticket_path(cfg, st->domain);
    ok = (conn = qs_control_connect(ctl, &err)) &&
         qs_control_set_view_ticket(conn, password, expiry, &err) &&
         qs_ticket_write_file(path, password, expiry, &err);
    explicit_bzero(password, strlen(password));
    if (!ok) {
        qs_log_error("set-ticket: %s", err->message);
        return 1;
    }
    printf("%s: new view-only ticket in %s; viewers who show it see and hear the guest, "
           "their input does not reach it ('console %s --rights view' prints it)\n",
           st->domain, path, st->domain);
    return 0;
}
