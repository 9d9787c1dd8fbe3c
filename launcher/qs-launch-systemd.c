/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The launcher's side of systemd (qs-launch-systemd.h). systemctl is run as
 * a command rather than spoken to over D-Bus: it is what an administrator
 * runs, it talks to PID 1 over its private socket when the system bus is
 * down, and its errors are the ones the administrator knows. */

#include <string.h>
#include <gio/gio.h>
#include "qs-launch-systemd.h"

#define UNIT_PREFIX "qemu-spice@"
#define UNIT_SUFFIX ".service"

char *qs_systemd_unit_name(const char *uuid, GError **error)
{
    g_autofree char *lower = NULL;

    if (!uuid || !g_uuid_string_is_valid(uuid)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "'%s' is not a domain UUID (the instance of qemu-spice@.service)",
                    uuid ? uuid : "");
        return NULL;
    }
    lower = g_ascii_strdown(uuid, -1);
    return g_strconcat(UNIT_PREFIX, lower, UNIT_SUFFIX, NULL);
}

gboolean qs_systemd_booted(const char *root_dir)
{
    return g_file_test(root_dir, G_FILE_TEST_IS_DIR);
}

const char *qs_systemctl_path(void)
{
    /* /bin is /usr/bin on merged-/usr hosts; older ones have only /bin. */
    return g_file_test("/usr/bin/systemctl", G_FILE_TEST_IS_EXECUTABLE)
           ? "/usr/bin/systemctl" : "/bin/systemctl";
}

typedef struct {
    GMainLoop *loop;
    char *err_text;
    GError *error;
    gboolean done;
} CtlRun;

static void on_communicated(GObject *src, GAsyncResult *res, gpointer data)
{
    CtlRun *r = data;

    g_subprocess_communicate_utf8_finish(G_SUBPROCESS(src), res, NULL,
                                         &r->err_text, &r->error);
    r->done = TRUE;
    g_main_loop_quit(r->loop);
}

static gboolean on_timeout(gpointer data)
{
    g_main_loop_quit(((CtlRun *)data)->loop);
    return G_SOURCE_REMOVE;
}

static char *first_line(const char *text)
{
    g_autofree char *t = g_strdup(text ? text : "");

    g_strstrip(t);
    return t[0] ? g_strndup(t, strcspn(t, "\n")) : g_strdup("(no message)");
}

gboolean qs_systemd_ctl(const char *systemctl, const char *verb,
                        const char *unit, guint timeout_ms, GError **error)
{
    g_autoptr(GMainContext) ctx = g_main_context_new();
    g_autoptr(GMainLoop) loop = g_main_loop_new(ctx, FALSE);
    g_autoptr(GSubprocess) proc = NULL;
    g_autoptr(GSource) timer = NULL;
    g_autofree char *text = NULL;
    CtlRun r = { .loop = loop };
    gboolean ok = FALSE;

    g_main_context_push_thread_default(ctx);
    proc = g_subprocess_new(G_SUBPROCESS_FLAGS_STDOUT_SILENCE |
                            G_SUBPROCESS_FLAGS_STDERR_PIPE, &r.error,
                            systemctl, verb, "--no-block", "--", unit, NULL);
    if (!proc) {
        g_propagate_prefixed_error(error, g_steal_pointer(&r.error),
                                   "%s %s %s: ", systemctl, verb, unit);
    } else {
        g_subprocess_communicate_utf8_async(proc, NULL, NULL,
                                            on_communicated, &r);
        timer = g_timeout_source_new(timeout_ms);
        g_source_set_callback(timer, on_timeout, &r, NULL);
        g_source_attach(timer, ctx);
        g_main_loop_run(loop);
        g_source_destroy(timer);
        if (!r.done) {
            g_subprocess_force_exit(proc);
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                        "%s %s %s: no answer within %u ms", systemctl,
                        verb, unit, timeout_ms);
            /* Reap it, so no zombie outlives the hook. */
            while (!r.done) {
                g_main_context_iteration(ctx, TRUE);
            }
        } else if (r.error) {
            g_propagate_prefixed_error(error, g_steal_pointer(&r.error),
                                       "%s %s %s: ", systemctl, verb, unit);
        } else if (!g_subprocess_get_if_exited(proc) ||
                   g_subprocess_get_exit_status(proc) != 0) {
            text = first_line(r.err_text);
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                        "%s %s %s failed: %s", systemctl, verb, unit, text);
        } else {
            ok = TRUE;
        }
    }
    g_main_context_pop_thread_default(ctx);
    g_clear_error(&r.error);
    g_free(r.err_text);
    return ok;
}
