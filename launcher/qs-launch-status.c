/* SPDX-License-Identifier: GPL-2.0-or-later */
/* status: what runs for a domain (the state file, the helper's liveness and
 * its client), or that the hook's launcher is still attaching or failed. */

#include <stdio.h>
#include <string.h>
#include <gio/gio.h>
#include "qs-launch-control.h"
#include "qs-launch-json.h"
#include "qs-launch-log.h"
#include "qs-launch-pending.h"
#include "qs-launch-run-dir.h"
#include "qs-launch-status.h"

/* The helper's clients from its control socket; NULL if it does not answer. */
static GVariant *helper_clients(QsLaunchConfig *cfg, const QsLaunchState *st)
{
    g_autofree char *ctl = qs_run_path(cfg, st->domain, ".ctl");
    g_autoptr(GDBusConnection) conn = qs_control_connect(ctl, NULL);
    g_autoptr(GVariant) status = conn ? qs_control_get_status(conn, NULL)
                                      : NULL;

    return status ? g_variant_lookup_value(status, "clients", G_VARIANT_TYPE("aa{sv}"))
                  : NULL;
}

typedef struct {
    const char *address;
    const char *rights;
    const char **chans;
    gint64 since;
    gboolean tls;
    guint64 bytes, bps;
    guint32 rtt_us;
} Client;

static void client_read(GVariant *c, Client *out)
{
    *out = (Client){ 0 };
    g_variant_lookup(c, "rights", "&s", &out->rights);
    g_variant_lookup(c, "bytes", "t", &out->bytes);
    g_variant_lookup(c, "link-bps", "t", &out->bps);
    g_variant_lookup(c, "rtt-us", "u", &out->rtt_us);
    g_variant_lookup(c, "address", "&s", &out->address);
    g_variant_lookup(c, "since", "x", &out->since);
    g_variant_lookup(c, "tls", "b", &out->tls);
    g_variant_lookup(c, "channels", "^a&s", &out->chans);
}

static gboolean view_only(const Client *c)
{
    return c->rights && strcmp(c->rights, "view") == 0;
}

static void clients_json(GVariant *clients, JsonBuilder *b)
{
    json_builder_begin_array(b);
    for (gsize i = 0; i < g_variant_n_children(clients); i++) {
        g_autoptr(GVariant) v = g_variant_get_child_value(clients, i);
        Client c;

        client_read(v, &c);
        json_builder_begin_object(b);
        qs_json_member_string(b, "address", c.address ? c.address : "");
        qs_json_member_int(b, "since", c.since);
        qs_json_member_bool(b, "tls", c.tls);
        qs_json_member_string(b, "rights", view_only(&c) ? "view" : "control");
        /* The helper's counters are below 2^63. */
        qs_json_member_int(b, "bytes", (gint64)MIN(c.bytes, (guint64)G_MAXINT64));
        qs_json_member_int(b, "link_bps", (gint64)MIN(c.bps, (guint64)G_MAXINT64));
        qs_json_member_int(b, "rtt_us", c.rtt_us);
        json_builder_set_member_name(b, "channels");
        json_builder_begin_array(b);
        for (guint k = 0; c.chans && c.chans[k]; k++) {
            json_builder_add_string_value(b, c.chans[k]);
        }
        json_builder_end_array(b);
        json_builder_end_object(b);
        g_free(c.chans);
    }
    json_builder_end_array(b);
}

static char *clients_text(GVariant *clients)
{
    GString *out = g_string_new("");

    for (gsize i = 0; i < g_variant_n_children(clients); i++) {
        g_autoptr(GVariant) v = g_variant_get_child_value(clients, i);
        g_autofree char *names = NULL;
        Client c;

        client_read(v, &c);
        names = c.chans ? g_strjoinv(",", (char **)c.chans) : g_strdup("");
        g_string_append_printf(out, "%s%s (%s%s%s; %.1f Mbit/s, %u ms, %" G_GUINT64_FORMAT
                               " KiB sent)", i ? ", " : "", c.address ? c.address : "?",
                               view_only(&c) ? "view only, " : "",
                               c.tls ? "TLS, " : "", names, c.bps / 1e6, c.rtt_us / 1000,
                               c.bytes / 1024);
        g_free(c.chans);
    }
    return g_string_free(out, FALSE);
}

static void status_line(QsLaunchConfig *cfg, const QsLaunchState *st,
                        gboolean json, GString *out)
{
    gint64 now = g_get_real_time() / G_USEC_PER_SEC;
    gboolean alive = qs_pid_alive(st->helper_pid);
    gboolean mon = qs_pid_alive(st->monitor_pid);
    g_autoptr(GVariant) clients = alive ? helper_clients(cfg, st) : NULL;
    g_autofree char *text = NULL;

    if (json) {
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autofree char *line = NULL;

        json_builder_begin_object(b);
        qs_launch_state_add_members(st, b);
        qs_json_member_bool(b, "helper_running", alive);
        qs_json_member_bool(b, "launcher_running", mon);
        qs_json_member_int(b, "uptime", alive ? now - st->started : 0);
        json_builder_set_member_name(b, "clients");
        if (clients) {
            clients_json(clients, b);
        } else {
            json_builder_add_null_value(b);
        }
        json_builder_end_object(b);
        line = qs_json_line(b);
        g_string_append(out, line);
        return;
    }
    text = clients ? clients_text(clients) : NULL;
    g_string_append_printf(out, "%s: %s, mode %s, helper pid %d, port %u, "
                           "tls-port %u, uptime %" G_GINT64_FORMAT " s, "
                           "restarts %u%s, clients: %s\n", st->domain,
                           alive ? "running" : "NOT RUNNING", st->mode,
                           st->helper_pid, st->port, st->tls_port,
                           alive ? now - st->started : 0, st->restarts,
                           mon ? (st->supervise ? ", supervised" : "")
                               : ", launcher gone",
                           !alive ? "none"
                           : !text ? "unknown (no answer on the control socket)"
                           : *text ? text : "none");
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
