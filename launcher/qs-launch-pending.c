/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The hook's attach record, a small GKeyFile in the run directory, written
 * before libvirt's 'started' hook returns, so that 'status' right after
 * 'virsh start' can say "starting" instead of "not attached". */

#include <string.h>
#include <unistd.h>
#include <gio/gio.h>
#include "qs-launch-pending.h"
#include "qs-launch-session.h"
#include "qs-launch-state.h"

#define GROUP "hook"
#define PENDING_MAX 8192

void qs_pending_free(QsPending *p)
{
    if (p) {
        g_free(p->error);
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

int qs_pending_exit_code(const QsPending *p)
{
    return !p->failed && qs_pid_alive(p->pid) ? 4 : 1;
}

char *qs_pending_describe(const QsLaunchConfig *cfg, const char *domain,
                          const QsPending *p, gboolean json)
{
    gint64 now = g_get_real_time() / G_USEC_PER_SEC;
    gboolean running = !p->failed && qs_pid_alive(p->pid);
    const char *what = p->failed ? "failed" : running ? "starting" : "ended";
    g_autofree char *log = qs_log_path(cfg, domain);
    GString *o;

    if (json) {
        o = g_string_new("{\"domain\":");
        qs_json_append_string(o, domain);
        g_string_append_printf(o, ",\"hook\":\"%s\",\"launcher_pid\":%d,"
                               "\"since\":%" G_GINT64_FORMAT ",\"error\":",
                               what, p->pid, p->since);
        if (p->error) {
            qs_json_append_string(o, p->error);
        } else {
            g_string_append(o, "null");
        }
        g_string_append(o, "}\n");
        return g_string_free(o, FALSE);
    }
    if (running) {
        return g_strdup_printf("%s: starting (the libvirt hook's launcher, "
                               "pid %d, has been attaching for %" G_GINT64_FORMAT
                               " s; it waits up to [launcher] wait)\n", domain,
                               p->pid, MAX(now - p->since, 0));
    }
    if (p->failed) {
        return g_strdup_printf("%s: not attached: the libvirt hook's attach "
                               "failed %" G_GINT64_FORMAT " s ago: %s\n",
                               domain, MAX(now - p->since, 0),
                               p->error ? p->error : "(no message)");
    }
    return g_strdup_printf("%s: not attached: the libvirt hook's launcher "
                           "(pid %d) ended without attaching (see %s and "
                           "syslog)\n", domain, p->pid, log);
}
