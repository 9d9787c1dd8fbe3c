/* SPDX-License-Identifier: GPL-2.0-or-later */
/* State file I/O: a flat JSON object of strings, integers and booleans, read
 * back with a small bounded parser (no JSON library for one flat object). */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <gio/gio.h>
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

void qs_json_append_string(GString *out, const char *s)
{
    g_string_append_c(out, '"');
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        switch (*c) {
        case '"':  g_string_append(out, "\\\""); break;
        case '\\': g_string_append(out, "\\\\"); break;
        case '\n': g_string_append(out, "\\n"); break;
        case '\r': g_string_append(out, "\\r"); break;
        case '\t': g_string_append(out, "\\t"); break;
        default:
            if (*c < 0x20) {
                g_string_append_printf(out, "\\u%04x", *c);
            } else {
                g_string_append_c(out, (char)*c);
            }
        }
    }
    g_string_append_c(out, '"');
}

static void put_str(GString *o, const char *key, const char *v)
{
    g_string_append_printf(o, "%s\"%s\":", o->len > 1 ? "," : "", key);
    if (v) {
        qs_json_append_string(o, v);
    } else {
        g_string_append(o, "null");
    }
}

static void put_int(GString *o, const char *key, gint64 v)
{
    g_string_append_printf(o, "%s\"%s\":%" G_GINT64_FORMAT,
                           o->len > 1 ? "," : "", key, v);
}

char *qs_launch_state_to_json(const QsLaunchState *st)
{
    GString *o = g_string_new("{");

    put_str(o, "domain", st->domain);
    put_str(o, "uuid", st->uuid);
    put_str(o, "mode", st->mode);
    put_int(o, "monitor_pid", st->monitor_pid);
    put_int(o, "helper_pid", st->helper_pid);
    put_str(o, "host", st->host);
    put_str(o, "listen", st->listen);
    put_int(o, "port", st->port);
    put_int(o, "tls_port", st->tls_port);
    put_str(o, "ticket_file", st->ticket_file);
    put_int(o, "ticket_expiry", st->ticket_expiry);
    put_int(o, "started", st->started);
    put_int(o, "attached", st->attached);
    put_int(o, "restarts", st->restarts);
    g_string_append_printf(o, ",\"supervise\":%s",
                           st->supervise ? "true" : "false");
    put_str(o, "log", st->log);
    put_str(o, "tls_dir", st->tls_dir);
    g_string_append(o, "}\n");
    return g_string_free(o, FALSE);
}

/* --- reading ------------------------------------------------------------ */

typedef struct {
    const char *p;
    const char *end;
} Lex;

static void skip_ws(Lex *l)
{
    while (l->p < l->end && g_ascii_isspace(*l->p)) {
        l->p++;
    }
}

static char *lex_string(Lex *l)
{
    GString *s;

    if (l->p >= l->end || *l->p != '"') {
        return NULL;
    }
    s = g_string_new(NULL);
    for (l->p++; l->p < l->end && *l->p != '"'; l->p++) {
        if (*l->p != '\\') {
            g_string_append_c(s, *l->p);
            continue;
        }
        if (++l->p >= l->end) {
            break;
        }
        switch (*l->p) {
        case 'n': g_string_append_c(s, '\n'); break;
        case 'r': g_string_append_c(s, '\r'); break;
        case 't': g_string_append_c(s, '\t'); break;
        case 'u': {
            char hex[5] = { 0 };
            guint64 v = 0;

            if (l->end - l->p < 5) {
                goto bad;
            }
            memcpy(hex, l->p + 1, 4);
            if (!g_ascii_string_to_unsigned(hex, 16, 1, 0x7f, &v, NULL)) {
                goto bad;  /* we only ever write control characters so */
            }
            g_string_append_c(s, (char)v);
            l->p += 4;
            break;
        }
        default: g_string_append_c(s, *l->p);
        }
    }
    if (l->p >= l->end) {
        goto bad;
    }
    l->p++;
    return g_string_free(s, FALSE);
bad:
    g_string_free(s, TRUE);
    return NULL;
}

typedef struct {
    const char *key;
    char type;      /* s, i, u, b */
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

static gboolean store(QsLaunchState *st, const Field *f, Lex *l)
{
    char *base = (char *)st + f->offset;

    if (l->end - l->p >= 4 && strncmp(l->p, "null", 4) == 0) {
        l->p += 4;
        return f->type == 's';
    }
    if (f->type == 's') {
        char *v = lex_string(l);

        if (!v) {
            return FALSE;
        }
        g_free(*(char **)base);
        *(char **)base = v;
        return TRUE;
    }
    if (f->type == 'b') {
        if (l->end - l->p >= 4 && strncmp(l->p, "true", 4) == 0) {
            *(gboolean *)base = TRUE;
            l->p += 4;
            return TRUE;
        }
        if (l->end - l->p >= 5 && strncmp(l->p, "false", 5) == 0) {
            *(gboolean *)base = FALSE;
            l->p += 5;
            return TRUE;
        }
        return FALSE;
    }
    {
        char num[24] = { 0 };
        gsize n = 0;
        gint64 v = 0;

        while (l->p < l->end && n < sizeof(num) - 1 &&
               (g_ascii_isdigit(*l->p) || *l->p == '-')) {
            num[n++] = *l->p++;
        }
        if (!g_ascii_string_to_signed(num, 10, G_MININT64, G_MAXINT64, &v,
                                      NULL)) {
            return FALSE;
        }
        if (f->type == 'i') {
            if (v < 0 || v > G_MAXINT) {
                return FALSE;
            }
            *(int *)base = (int)v;
        } else if (f->type == 'u') {
            if (v < 0 || v > G_MAXUINT) {
                return FALSE;
            }
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
    Lex l = { json, json + strlen(json) };

    skip_ws(&l);
    if (l.p >= l.end || *l.p++ != '{') {
        goto bad;
    }
    for (;;) {
        g_autofree char *key = NULL;
        const Field *f = NULL;

        skip_ws(&l);
        if (l.p < l.end && *l.p == '}') {
            l.p++;
            break;
        }
        if (!(key = lex_string(&l))) {
            goto bad;
        }
        skip_ws(&l);
        if (l.p >= l.end || *l.p++ != ':') {
            goto bad;
        }
        skip_ws(&l);
        for (guint i = 0; i < G_N_ELEMENTS(fields); i++) {
            if (strcmp(fields[i].key, key) == 0) {
                f = &fields[i];
            }
        }
        if (!f || !store(st, f, &l)) {
            goto bad;
        }
        skip_ws(&l);
        if (l.p < l.end && *l.p == ',') {
            l.p++;
        }
    }
    skip_ws(&l);
    if (l.p != l.end || !st->domain) {
        goto bad;
    }
    return g_steal_pointer(&st);
bad:
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                "malformed state file near offset %td", l.p - json);
    return NULL;
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
