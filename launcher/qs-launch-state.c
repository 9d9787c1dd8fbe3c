/* SPDX-License-Identifier: GPL-2.0-or-later */
/* State file I/O: a flat JSON object of strings, integers and booleans,
 * written and read with json-glib; members are checked here. */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include "qs-launch-json.h"
#include "qs-launch-state.h"

#define STATE_MAX 65536

void qs_launch_state_free(QsLaunchState *st)
{
    if (!st) {
        return;
    }
    g_free(st->domain);
    g_free(st->uuid);
    g_free(st->mode);
    g_free(st->host);
    g_free(st->listen);
    g_free(st->ticket_file);
    g_free(st->log);
    g_free(st->tls_dir);
    g_free(st);
}

void qs_launch_state_add_members(const QsLaunchState *st, JsonBuilder *b)
{
    qs_json_member_string(b, "domain", st->domain);
    qs_json_member_string(b, "uuid", st->uuid);
    qs_json_member_string(b, "mode", st->mode);
    qs_json_member_int(b, "monitor_pid", st->monitor_pid);
    qs_json_member_int(b, "helper_pid", st->helper_pid);
    qs_json_member_string(b, "host", st->host);
    qs_json_member_string(b, "listen", st->listen);
    qs_json_member_int(b, "port", st->port);
    qs_json_member_int(b, "tls_port", st->tls_port);
    qs_json_member_string(b, "ticket_file", st->ticket_file);
    qs_json_member_int(b, "ticket_expiry", st->ticket_expiry);
    qs_json_member_int(b, "started", st->started);
    qs_json_member_int(b, "attached", st->attached);
    qs_json_member_int(b, "restarts", st->restarts);
    qs_json_member_bool(b, "supervise", st->supervise);
    qs_json_member_string(b, "log", st->log);
    qs_json_member_string(b, "tls_dir", st->tls_dir);
}

char *qs_launch_state_to_json(const QsLaunchState *st)
{
    g_autoptr(JsonBuilder) b = json_builder_new();

    json_builder_begin_object(b);
    qs_launch_state_add_members(st, b);
    json_builder_end_object(b);
    return qs_json_line(b);
}

/* --- reading ------------------------------------------------------------ */

typedef struct {
    const char *key;
    char type;      /* s: string or null, i: int, u: guint, l: gint64, b: boolean */
    gsize offset;
} Field;

#define F(k, t, m) { k, t, G_STRUCT_OFFSET(QsLaunchState, m) }
static const Field fields[] = {
    F("domain", 's', domain), F("uuid", 's', uuid), F("mode", 's', mode),
    F("monitor_pid", 'i', monitor_pid), F("helper_pid", 'i', helper_pid),
    F("host", 's', host), F("listen", 's', listen), F("port", 'u', port),
    F("tls_port", 'u', tls_port), F("ticket_file", 's', ticket_file),
    F("ticket_expiry", 'l', ticket_expiry), F("started", 'l', started),
    F("attached", 'l', attached), F("restarts", 'u', restarts),
    F("supervise", 'b', supervise), F("log", 's', log),
    F("tls_dir", 's', tls_dir),
};

static const Field *field_for(const char *key)
{
    for (guint i = 0; i < G_N_ELEMENTS(fields); i++) {
        if (strcmp(fields[i].key, key) == 0) {
            return &fields[i];
        }
    }
    return NULL;
}

static gboolean store(QsLaunchState *st, const Field *f, JsonNode *node,
                      GError **error)
{
    char *base = (char *)st + f->offset;
    GType type = JSON_NODE_HOLDS_VALUE(node) ? json_node_get_value_type(node) : G_TYPE_INVALID;

    if (f->type == 's') {
        const char *v;

        if (JSON_NODE_HOLDS_NULL(node)) {
            g_clear_pointer((char **)base, g_free);
            return TRUE;
        }
        if (type != G_TYPE_STRING) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                        "\"%s\" is not a string", f->key);
            return FALSE;
        }
        v = json_node_get_string(node);
        /* json-glib 1.6 decodes a \u escape with fewer than four hex
         * digits into bytes that are not UTF-8 (found by the fuzz target,
         * corpus "short-unicode-escape"); such a value would not read back. */
        if (!g_utf8_validate(v, -1, NULL)) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                        "\"%s\" is not UTF-8", f->key);
            return FALSE;
        }
        g_free(*(char **)base);
        *(char **)base = g_strdup(v);
        return TRUE;
    }
    if (f->type == 'b') {
        if (type != G_TYPE_BOOLEAN) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                        "\"%s\" is not true or false", f->key);
            return FALSE;
        }
        *(gboolean *)base = json_node_get_boolean(node);
        return TRUE;
    }
    {
        gint64 v, max = f->type == 'i' ? G_MAXINT : f->type == 'u' ? G_MAXUINT : G_MAXINT64;
        gint64 min = f->type == 'l' ? G_MININT64 : 0;

        if (type != G_TYPE_INT64) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                        "\"%s\" is not an integer", f->key);
            return FALSE;
        }
        v = json_node_get_int(node);
        if (v < min || v > max) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                        "\"%s\" is out of range: %" G_GINT64_FORMAT, f->key, v);
            return FALSE;
        }
        if (f->type == 'i') {
            *(int *)base = (int)v;
        } else if (f->type == 'u') {
            *(guint *)base = (guint)v;
        } else {
            *(gint64 *)base = v;
        }
        return TRUE;
    }
}

QsLaunchState *qs_launch_state_from_json(const char *json, GError **error)
{
    g_autoptr(QsLaunchState) st = g_new0(QsLaunchState, 1);
    g_autoptr(JsonParser) parser = json_parser_new_immutable();
    g_autoptr(GError) local = NULL;
    g_autoptr(GList) members = NULL;
    JsonNode *root;
    JsonObject *obj;

    /* json-glib checks the syntax; the members' names and types, and the
     * strings' UTF-8 (below and in store()), are ours to check. */
    if (!g_utf8_validate(json, -1, NULL)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "malformed state file: not UTF-8");
        return NULL;
    }
    if (!json_parser_load_from_data(parser, json, -1, &local)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "malformed state file: %s", local->message);
        return NULL;
    }
    root = json_parser_get_root(parser);
    if (!root || !JSON_NODE_HOLDS_OBJECT(root)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "malformed state file: not a JSON object");
        return NULL;
    }
    obj = json_node_get_object(root);
    members = json_object_get_members(obj);
    for (GList *m = members; m; m = m->next) {
        const Field *f = field_for(m->data);

        if (!f) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                        "malformed state file: unknown member \"%s\"",
                        (const char *)m->data);
            return NULL;
        }
        if (!store(st, f, json_object_get_member(obj, m->data), &local)) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                        "malformed state file: %s", local->message);
            return NULL;
        }
    }
    if (!st->domain) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "malformed state file: no \"domain\"");
        return NULL;
    }
    return g_steal_pointer(&st);
}

gboolean qs_launch_state_save(const QsLaunchState *st, const char *path,
                              GError **error)
{
    g_autofree char *json = qs_launch_state_to_json(st);

    /* g_file_set_contents writes a temporary file and renames it; 0644 so
     * unprivileged status readers see ports but not the ticket file's data. */
    return g_file_set_contents_full(path, json, -1,
                                    G_FILE_SET_CONTENTS_CONSISTENT, 0644,
                                    error);
}

QsLaunchState *qs_launch_state_load(const char *path, GError **error)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    QsLaunchState *st;

    if (!g_file_get_contents(path, &text, &len, error)) {
        return NULL;
    }
    if (len > STATE_MAX || strlen(text) != len) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "%s: not a state file", path);
        return NULL;
    }
    st = qs_launch_state_from_json(text, error);
    if (!st) {
        g_prefix_error(error, "%s: ", path);
    }
    return st;
}
