/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An attached domain's session (qs-launch-session.h): freeing it, and what
 * it leaves on the host (the state and pid files, the console in the
 * domain's metadata) until its cleanup. */

#include <string.h>
#include <unistd.h>
#include <gio/gio.h>
#include "qs-launch-libvirt.h"
#include "qs-launch-log.h"
#include "qs-launch-run-dir.h"
#include "qs-launch-session.h"

void qs_session_free(Session *s)
{
    qs_domain_info_free(s->info);
    qs_launch_state_free(s->st);
    if (s->password) {
        explicit_bzero(s->password, strlen(s->password));
        g_free(s->password);
    }
    for (int *fd = &s->listen_fd; fd <= &s->log_fd; fd++) {
        if (*fd >= 0) {
            close(*fd);
        }
    }
    g_free(s->state_path);
    g_free(s->pid_path);
    g_free(s->lock_path);
    g_free(s->control_path);
    g_free(s->tls_private);
    g_free(s->token_keys_path);
    for (guint i = 0; i < G_N_ELEMENTS(s->signals); i++) {
        g_clear_handle_id(&s->signals[i], g_source_remove);
    }
    g_clear_pointer(&s->loop, g_main_loop_unref);
    g_free(s);
}

static QsConsoleMeta session_meta(Session *s)
{
    QsConsoleMeta m = {
        .autostart = s->info->autostart,
        .host = s->st->host,
        .port = s->st->port,
        .tls_port = s->st->tls_port,
        .ticket_file = s->st->ticket_file,
        .ticket_expiry = s->st->ticket_expiry,
        .pid = s->st->helper_pid,
        .restarts = s->st->restarts,
        .started = s->st->started,
    };
    return m;
}

/* meta NULL: remove the console (keep an opt-in). */
gboolean qs_session_publish(Session *s, gboolean present, GError **error)
{
    g_autoptr(virConnect) conn = qs_virt_connect(s->cfg->uri, error);
    g_autoptr(virDomain) dom = NULL;
    QsConsoleMeta meta = session_meta(s);
    QsConsoleMeta optin = { .autostart = s->info->autostart };

    if (!conn || !(dom = qs_virt_lookup(conn, s->info->uuid, error))) {
        return FALSE;
    }
    return qs_virt_set_console_metadata(dom, present ? &meta : &optin, error);
}

gboolean qs_session_write_state(Session *s, GError **error)
{
    g_autofree char *pid = g_strdup_printf("%d\n", s->st->helper_pid);

    return g_file_set_contents_full(s->pid_path, pid, -1,
                                    G_FILE_SET_CONTENTS_CONSISTENT, 0644,
                                    error) &&
           qs_launch_state_save(s->st, s->state_path, error);
}

void qs_session_remove_local_files(Session *s)
{
    unlink(s->state_path);
    unlink(s->pid_path);
    if (s->control_path) {
        unlink(s->control_path);
    }
    if (s->st->ticket_file) {
        unlink(s->st->ticket_file);
    }
    if (s->token_keys_path) {
        unlink(s->token_keys_path);
    }
    {
        g_autofree char *view = qs_view_ticket_path(s->cfg, s->st->domain);

        unlink(view);
    }
    if (s->tls_private) {
        static const char *const f[] = { "server-cert.pem", "server-key.pem",
                                         "ca-cert.pem" };

        for (guint i = 0; i < G_N_ELEMENTS(f); i++) {
            g_autofree char *p = g_build_filename(s->tls_private, f[i], NULL);

            unlink(p);
        }
        rmdir(s->tls_private);
    }
    unlink(s->lock_path);
}

void qs_session_cleanup(Session *s)
{
    g_autoptr(GError) err = NULL;

    if (!qs_session_publish(s, FALSE, &err)) {
        qs_log_error("removing the console metadata: %s", err->message);
    }
    qs_session_remove_local_files(s);
}
