/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The hook's attach record, a small GKeyFile in the run directory, written
 * before libvirt's 'started' hook returns, so that 'status' right after
 * 'virsh start' can say "starting" instead of "not attached". */

#include <string.h>
#include <unistd.h>
#include <gio/gio.h>
#include "qs-launch-json.h"
#include "qs-launch-pending.h"
#include "qs-launch-run-dir.h"
#include "qs-launch-state.h"

#define GROUP "hook"
#define PENDING_MAX 8192
/* Beyond [launcher] wait: systemd's start-up of the unit and its restarts. */
#define UNIT_GRACE_S 30

void qs_pending_free(QsPending *p)
{
    if (p) {
        g_free(p->error);
        g_free(p->unit);
        g_free(p);
    }
}

gboolean qs_pending_save(const QsLaunchConfig *cfg, const char *domain,
                         const QsPending *p, GError **error)
{
    g_autoptr(GKeyFile) kf = g_key_file_new();
    g_autofree char *path = qs_run_path(cfg, domain, ".hook");
    g_autofree char *data = NULL;
    gsize len = 0;

    g_key_file_set_string(kf, GROUP, "state", p->failed ? "failed" : "starting");
    g_key_file_set_integer(kf, GROUP, "pid", p->pid);
    g_key_file_set_int64(kf, GROUP, "since", p->since);
    if (p->error) {
        g_key_file_set_string(kf, GROUP, "error", p->error);
    }
    if (p->unit) {
        g_key_file_set_string(kf, GROUP, "unit", p->unit);
    }
    data = g_key_file_to_data(kf, &len, NULL);
    return g_mkdir_with_parents(cfg->run_dir, 0755) == 0 &&
           g_file_set_contents_full(path, data, (gssize)len,
                                    G_FILE_SET_CONTENTS_CONSISTENT, 0644,
                                    error);
}

QsPending *qs_pending_load(const QsLaunchConfig *cfg, const char *domain)
{
    g_autofree char *path = qs_run_path(cfg, domain, ".hook");
    g_autoptr(GKeyFile) kf = g_key_file_new();
    g_autoptr(QsPending) p = g_new0(QsPending, 1);
    g_autofree char *state = NULL;
    g_autofree char *text = NULL;
    gsize len = 0;

    if (!g_file_get_contents(path, &text, &len, NULL) || len > PENDING_MAX ||
        !g_key_file_load_from_data(kf, text, len, G_KEY_FILE_NONE, NULL) ||
        !(state = g_key_file_get_string(kf, GROUP, "state", NULL))) {
        return NULL;
    }
    p->failed = strcmp(state, "failed") == 0;
    p->pid = g_key_file_get_integer(kf, GROUP, "pid", NULL);
    p->since = g_key_file_get_int64(kf, GROUP, "since", NULL);
    p->error = g_key_file_get_string(kf, GROUP, "error", NULL);
    p->unit = g_key_file_get_string(kf, GROUP, "unit", NULL);
    return g_steal_pointer(&p);
}

void qs_pending_remove(const QsLaunchConfig *cfg, const char *domain, int pid)
{
    g_autofree char *path = qs_run_path(cfg, domain, ".hook");
    g_autoptr(QsPending) p = pid > 0 ? qs_pending_load(cfg, domain) : NULL;

    if (pid <= 0 || (p && p->pid == pid)) {
        unlink(path);
    }
}

/* Until the unit's launcher runs there is no pid to look at: systemd has
 * the start job queued (ordered after libvirt's daemons). Past the wait the
 * launcher would have given up on, the unit is not coming. */
static gboolean running(const QsLaunchConfig *cfg, const QsPending *p,
                        gint64 now)
{
    if (p->failed) {
        return FALSE;
    }
    if (p->unit && p->pid == 0) {
        return now - p->since <= (gint64)cfg->wait_s + UNIT_GRACE_S;
    }
    return qs_pid_alive(p->pid);
}

int qs_pending_exit_code(const QsLaunchConfig *cfg, const QsPending *p)
{
    return running(cfg, p, g_get_real_time() / G_USEC_PER_SEC) ? 4 : 1;
}

char *qs_pending_describe(const QsLaunchConfig *cfg, const char *domain,
                          const QsPending *p, gboolean json)
{
    gint64 now = g_get_real_time() / G_USEC_PER_SEC;
    gboolean run = running(cfg, p, now);
    const char *what = p->failed ? "failed" : run ? "starting" : "ended";
    g_autofree char *log = qs_log_path(cfg, domain);

    if (json) {
        g_autoptr(JsonBuilder) b = json_builder_new();

        json_builder_begin_object(b);
        qs_json_member_string(b, "domain", domain);
        qs_json_member_string(b, "hook", what);
        qs_json_member_int(b, "launcher_pid", p->pid);
        qs_json_member_int(b, "since", p->since);
        qs_json_member_string(b, "error", p->error);
        qs_json_member_string(b, "unit", p->unit);
        json_builder_end_object(b);
        return qs_json_line(b);
    }
    if (run && p->unit && p->pid == 0) {
        return g_strdup_printf("%s: starting (the libvirt hook asked systemd "
                               "to start %s %" G_GINT64_FORMAT " s ago)\n",
                               domain, p->unit, MAX(now - p->since, 0));
    }
    if (run && p->unit) {
        return g_strdup_printf("%s: starting (%s, launcher pid %d, has been "
                               "attaching for %" G_GINT64_FORMAT " s; it "
                               "waits up to [launcher] wait)\n", domain,
                               p->unit, p->pid, MAX(now - p->since, 0));
    }
    if (run) {
        return g_strdup_printf("%s: starting (the libvirt hook's launcher, "
                               "pid %d, has been attaching for %" G_GINT64_FORMAT
                               " s; it waits up to [launcher] wait)\n", domain,
                               p->pid, MAX(now - p->since, 0));
    }
    if (p->failed && !p->unit) {
        return g_strdup_printf("%s: not attached: the libvirt hook's attach "
                               "failed %" G_GINT64_FORMAT " s ago: %s\n",
                               domain, MAX(now - p->since, 0),
                               p->error ? p->error : "(no message)");
    }
    if (p->failed && p->unit) {
        return g_strdup_printf("%s: not attached: %s failed %" G_GINT64_FORMAT
                               " s ago: %s (systemctl status %s; journalctl "
                               "-u %s)\n", domain, p->unit,
                               MAX(now - p->since, 0),
                               p->error ? p->error : "(no message)", p->unit,
                               p->unit);
    }
    if (p->unit) {
        return g_strdup_printf("%s: not attached: %s did not attach (see "
                               "systemctl status %s, journalctl -u %s and "
                               "%s)\n", domain, p->unit, p->unit, p->unit,
                               log);
    }
    return g_strdup_printf("%s: not attached: the libvirt hook's launcher "
                           "(pid %d) ended without attaching (see %s and "
                           "syslog)\n", domain, p->pid, log);
}
