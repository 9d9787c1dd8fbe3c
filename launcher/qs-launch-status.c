/* SPDX-License-Identifier: GPL-2.0-or-later */
/* status: what runs for a domain (the state file, the helper's liveness and
 * its client), or that the hook's launcher is still attaching or failed. */

#include <stdio.h>
#include <string.h>
#include <gio/gio.h>
#include "qs-launch-commands.h"
#include "qs-launch-control.h"
#include "qs-launch-log.h"
#include "qs-launch-pending.h"
#include "qs-launch-session.h"

/* The helper's clients as JSON (an array) or text, from its control socket;
 * NULL if it does not answer. */
static char *helper_clients(QsLaunchConfig *cfg, const QsLaunchState *st,
                            gboolean json)
{
    g_autofree char *ctl = qs_run_path(cfg, st->domain, ".ctl");
    g_autoptr(GDBusConnection) conn = qs_control_connect(ctl, NULL);
    g_autoptr(GVariant) status = conn ? qs_control_get_status(conn, NULL)
                                      : NULL;
    g_autoptr(GVariant) clients = status ?
        g_variant_lookup_value(status, "clients", G_VARIANT_TYPE("aa{sv}")) :
        NULL;
    GString *out;

    if (!clients) {
        return NULL;
    }
    out = g_string_new(json ? "[" : "");
    for (gsize i = 0; i < g_variant_n_children(clients); i++) {
        g_autoptr(GVariant) c = g_variant_get_child_value(clients, i);
        g_autofree char *address = NULL;
        g_autofree char *rights = NULL;
        g_autofree const char **chans = NULL;
        gint64 since = 0;
        gboolean tls = FALSE;
        guint64 bytes = 0, bps = 0;
        guint32 rtt_us = 0;

        g_variant_lookup(c, "rights", "s", &rights);
        g_variant_lookup(c, "bytes", "t", &bytes);
        g_variant_lookup(c, "link-bps", "t", &bps);
        g_variant_lookup(c, "rtt-us", "u", &rtt_us);
        g_variant_lookup(c, "address", "s", &address);
        g_variant_lookup(c, "since", "x", &since);
        g_variant_lookup(c, "tls", "b", &tls);
        g_variant_lookup(c, "channels", "^a&s", &chans);
        if (json) {
            g_string_append(out, i ? ",{\"address\":" : "{\"address\":");
            qs_json_append_string(out, address ? address : "");
            g_string_append_printf(out, ",\"since\":%" G_GINT64_FORMAT
                                   ",\"tls\":%s,\"rights\":\"%s\",\"bytes\":%" G_GUINT64_FORMAT
                                   ",\"link_bps\":%" G_GUINT64_FORMAT ",\"rtt_us\":%u"
                                   ",\"channels\":[", since, tls ? "true" : "false",
                                   rights && strcmp(rights, "view") == 0 ? "view" : "control",
                                   bytes, bps, rtt_us);
            for (guint k = 0; chans && chans[k]; k++) {
                g_string_append(out, k ? "," : "");
                qs_json_append_string(out, chans[k]);
            }
            g_string_append(out, "]}");
        } else {
            g_autofree char *names = chans ? g_strjoinv(",", (char **)chans)
                                           : g_strdup("");

            g_string_append_printf(out, "%s%s (%s%s%s; %.1f Mbit/s, %u ms, %" G_GUINT64_FORMAT
                                   " KiB sent)", i ? ", " : "", address ? address : "?",
                                   rights && strcmp(rights, "view") == 0 ? "view only, " : "",
                                   tls ? "TLS, " : "", names, bps / 1e6, rtt_us / 1000,
                                   bytes / 1024);
        }
    }
    if (json) {
        g_string_append(out, "]");
    }
    return g_string_free(out, FALSE);
}

static void status_line(QsLaunchConfig *cfg, const QsLaunchState *st,
                        gboolean json, GString *out)
{
    gint64 now = g_get_real_time() / G_USEC_PER_SEC;
    gboolean alive = qs_pid_alive(st->helper_pid);
    gboolean mon = qs_pid_alive(st->monitor_pid);
    g_autofree char *clients = alive ? helper_clients(cfg, st, json) : NULL;

    if (json) {
        g_autofree char *j = qs_launch_state_to_json(st);

        g_strchomp(j);
        j[strlen(j) - 1] = '\0';
        g_string_append_printf(out, "%s,\"helper_running\":%s,\"launcher_running\":%s,"
                               "\"uptime\":%" G_GINT64_FORMAT ",\"clients\":%s}\n",
                               j, alive ? "true" : "false",
                               mon ? "true" : "false",
                               alive ? now - st->started : 0,
                               clients ? clients : "null");
        return;
    }
    g_string_append_printf(out, "%s: %s, mode %s, helper pid %d, port %u, "
                           "tls-port %u, uptime %" G_GINT64_FORMAT " s, "
                           "restarts %u%s, clients: %s\n", st->domain,
                           alive ? "running" : "NOT RUNNING", st->mode,
                           st->helper_pid, st->port, st->tls_port,
                           alive ? now - st->started : 0, st->restarts,
                           mon ? (st->supervise ? ", supervised" : "")
                               : ", launcher gone",
                           !alive ? "none"
                           : !clients ? "unknown (no answer on the control socket)"
                           : *clients ? clients : "none");
}

static void pending_out(const QsLaunchConfig *cfg, const char *domain,
                        const QsPending *p, gboolean json, GString *out)
{
    g_autofree char *line = qs_pending_describe(cfg, domain, p, json);

    g_string_append_printf(out, "%s\n", line);
}

int qs_cmd_status(QsLaunchConfig *cfg, const char *domain, gboolean json)
{
    g_autoptr(GString) out = g_string_new(NULL);
    g_autoptr(GError) err = NULL;

    if (domain) {
        g_autoptr(QsLaunchState) st = qs_find_state(cfg, domain, &err);
        g_autoptr(QsPending) p = NULL;

        /* No state yet: the hook may have fired and its launcher still be
         * waiting for libvirt to finish the start, or have failed. A
         * launcher that writes its state and drops its record between our
         * two reads is caught by the second read of the state. */
        if (!st && qs_domain_name_ok(domain, NULL) &&
            !(p = qs_pending_load(cfg, domain))) {
            g_clear_error(&err);
            st = qs_find_state(cfg, domain, &err);
        }
        if (st) {
            status_line(cfg, st, json, out);
            fputs(out->str, stdout);
            return qs_pid_alive(st->helper_pid) ? 0 : 3;
        }
        if (p) {
            int rc = qs_pending_exit_code(cfg, p);
            g_autofree char *line = qs_pending_describe(cfg, domain, p, json);

            if (rc == 4 || json) {
                printf("%s\n", line);
            } else {
                qs_log_error("status: %s", line);
            }
            return rc;
        }
        qs_log_error("status: %s", err->message);
        return 1;
    }
    {
        g_autoptr(GDir) dir = g_dir_open(cfg->run_dir, 0, NULL);
        g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
        const char *f;

        while (dir && (f = g_dir_read_name(dir))) {
            if (g_str_has_suffix(f, ".json") || g_str_has_suffix(f, ".hook")) {
                g_ptr_array_add(names, g_strdup(f));
            }
        }
        g_ptr_array_sort(names, (GCompareFunc)g_strcmp0);
        for (guint i = 0; i < names->len; i++) {
            const char *n = names->pdata[i];
            g_autofree char *p = g_build_filename(cfg->run_dir, n, NULL);
            g_autofree char *dom = g_strndup(n, strlen(n) - 5);
            g_autofree char *json_name = g_strconcat(dom, ".json", NULL);

            if (g_str_has_suffix(n, ".json")) {
                g_autoptr(QsLaunchState) st = qs_launch_state_load(p, NULL);

                if (st) {
                    status_line(cfg, st, json, out);
                }
            } else if (!g_ptr_array_find_with_equal_func(names, json_name,
                                                         g_str_equal, NULL)) {
                g_autoptr(QsPending) pend = qs_pending_load(cfg, dom);

                if (pend) {
                    pending_out(cfg, dom, pend, json, out);
                }
            }
        }
    }
    fputs(out->str, stdout);
    return 0;
}
