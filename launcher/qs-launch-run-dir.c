/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An attached domain's files under the run directory (qs-launch-run-dir.h). */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include <gio/gio.h>
#include "qs-launch-run-dir.h"

gboolean qs_pid_alive(int pid)
{
    return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

gboolean qs_domain_name_ok(const char *name, GError **error)
{
    if (!*name || strchr(name, '/') || name[0] == '.' || strlen(name) > 200) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "'%s' cannot name a state file (no '/', no leading '.')",
                    name);
        return FALSE;
    }
    return TRUE;
}

char *qs_run_path(const QsLaunchConfig *cfg, const char *domain,
                  const char *suffix)
{
    g_autofree char *base = g_strconcat(domain, suffix, NULL);

    return g_build_filename(cfg->run_dir, base, NULL);
}

char *qs_log_path(const QsLaunchConfig *cfg, const char *domain)
{
    g_autofree char *base = g_strconcat(domain, ".log", NULL);

    return g_build_filename(cfg->log_dir, base, NULL);
}

char *qs_view_ticket_path(const QsLaunchConfig *cfg, const char *domain)
{
    return qs_run_path(cfg, domain, ".view-ticket");
}

QsLaunchState *qs_find_state(const QsLaunchConfig *cfg, const char *domain,
                             GError **error)
{
    g_autofree char *path = NULL;
    g_autoptr(GDir) dir = NULL;
    const char *f;

    if (qs_domain_name_ok(domain, NULL)) {
        path = qs_run_path(cfg, domain, ".json");
        if (g_file_test(path, G_FILE_TEST_EXISTS)) {
            return qs_launch_state_load(path, error);
        }
    }
    dir = g_dir_open(cfg->run_dir, 0, NULL);
    while (dir && (f = g_dir_read_name(dir))) {
        g_autofree char *p = g_build_filename(cfg->run_dir, f, NULL);
        QsLaunchState *st;

        if (!g_str_has_suffix(f, ".json") ||
            !(st = qs_launch_state_load(p, NULL))) {
            continue;
        }
        if (st->uuid && g_ascii_strcasecmp(st->uuid, domain) == 0) {
            return st;
        }
        qs_launch_state_free(st);
    }
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                "domain '%s' is not attached (no state in %s)", domain,
                cfg->run_dir);
    return NULL;
}

/* Whether a monitor still holds DOMAIN's lock. */
gboolean qs_domain_locked(const QsLaunchConfig *cfg, const char *domain)
{
    g_autofree char *path = qs_run_path(cfg, domain, ".lock");
    int fd = open(path, O_RDWR | O_CLOEXEC);
    gboolean held;

    if (fd < 0) {
        return FALSE;
    }
    held = flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
    close(fd);
    return held;
}
