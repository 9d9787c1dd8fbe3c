/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libvirt's qemu.conf, the keys about SPICE (qs-launch-qemu-conf.h). */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <gio/gio.h>
#include "qs-launch-qemu-conf.h"

/* Lists inside lists are valid syntax; a file of brackets must not run
 * the recursion down. */
#define MAX_DEPTH 16

typedef enum {
    V_NUMBER,
    V_STRING,
    V_LIST,
} Kind;

typedef struct {
    const char *name;
    const char *p, *end;
    guint line;
    GError **error;
} Parser;

#define FAIL(ps, ...) fail(ps, g_strdup_printf(__VA_ARGS__))

static gboolean fail(Parser *ps, char *msg)
{
    g_set_error(ps->error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s:%u: %s", ps->name,
                ps->line, msg);
    g_free(msg);
    return FALSE;
}

static gboolean at(const Parser *ps, char c)
{
    return ps->p < ps->end && *ps->p == c;
}

static void skip_blanks(Parser *ps)
{
    while (at(ps, ' ') || at(ps, '\t')) {
        ps->p++;
    }
}

/* Blanks and line ends (counted). */
static void skip_space(Parser *ps)
{
    for (;;) {
        skip_blanks(ps);
        if (at(ps, '\n')) {
            ps->line++;
        } else if (!at(ps, '\r')) {
            return;
        }
        ps->p++;
    }
}

static void skip_line(Parser *ps)
{
    while (ps->p < ps->end && *ps->p != '\n' && *ps->p != '\r') {
        ps->p++;
    }
}

/* A string value; *out set when `out`. */
static gboolean parse_string(Parser *ps, char **out)
{
    const char *start;

    if (ps->end - ps->p >= 6 && strncmp(ps->p, "\"\"\"", 3) == 0) {
        const char *close = g_strstr_len(ps->p + 3, ps->end - ps->p - 3, "\"\"\"");

        if (!close) {
            return FAIL(ps, "a string opened with \"\"\" is not closed");
        }
        for (const char *q = ps->p; q < close; q++) {
            ps->line += *q == '\n';
        }
        if (out) {
            *out = g_strndup(ps->p + 3, (gsize)(close - ps->p - 3));
        }
        ps->p = close + 3;
        return TRUE;
    }
    start = ++ps->p;
    while (ps->p < ps->end && *ps->p != start[-1] && *ps->p != '\n' && *ps->p != '\r') {
        ps->p++;
    }
    if (!at(ps, start[-1])) {
        return FAIL(ps, "a string not closed on its line");
    }
    if (out) {
        *out = g_strndup(start, (gsize)(ps->p - start));
    }
    ps->p++;
    return TRUE;
}

static gboolean parse_value(Parser *ps, guint depth, Kind *kind, char **str, gint64 *num)
{
    if (ps->p >= ps->end) {
        return FAIL(ps, "a value is missing");
    }
    if (*ps->p == '"' || *ps->p == '\'') {
        *kind = V_STRING;
        return parse_string(ps, str);
    }
    if (*ps->p == '[') {
        if (depth >= MAX_DEPTH) {
            return FAIL(ps, "lists nested over %d deep", MAX_DEPTH);
        }
        *kind = V_LIST;
        ps->p++;
        skip_space(ps);
        while (!at(ps, ']')) {
            Kind k;

            if (!parse_value(ps, depth + 1, &k, NULL, NULL)) {
                return FALSE;
            }
            skip_space(ps);
            if (at(ps, ',')) {
                ps->p++;
                skip_space(ps);
            } else if (!at(ps, ']')) {
                return FAIL(ps, "a list needs ',' between its values and ']' at its end");
            }
        }
        ps->p++;
        return TRUE;
    }
    if (g_ascii_isdigit(*ps->p) || *ps->p == '-' || *ps->p == '+') {
        gboolean neg = *ps->p == '-';
        guint64 v = 0;

        *kind = V_NUMBER;
        ps->p += !g_ascii_isdigit(*ps->p);
        if (ps->p >= ps->end || !g_ascii_isdigit(*ps->p)) {
            return FAIL(ps, "a number without digits");
        }
        for (; ps->p < ps->end && g_ascii_isdigit(*ps->p); ps->p++) {
            if (v > (guint64)G_MAXINT64 / 10) {
                return FAIL(ps, "a number out of range");
            }
            v = v * 10 + (guint64)(*ps->p - '0');
        }
        if (v > (guint64)G_MAXINT64) {
            return FAIL(ps, "a number out of range");
        }
        if (num) {
            *num = neg ? -(gint64)v : (gint64)v;
        }
        return TRUE;
    }
    return FAIL(ps, "a value must be a number, a string or a list");
}

/* Keeps the value of a key read here; only its first statement counts,
 * as in libvirt, and only that one must have the right kind. */
static gboolean keep(QsQemuConf *qc, const char *key, Kind kind, char **str, gint64 num,
                     Parser *ps)
{
    char **slot = strcmp(key, "spice_listen") == 0 ? &qc->spice_listen
                : strcmp(key, "spice_tls_x509_cert_dir") == 0 ? &qc->spice_tls_dir
                : strcmp(key, "default_tls_x509_cert_dir") == 0 ? &qc->default_tls_dir : NULL;

    if (slot && !*slot) {
        if (kind != V_STRING) {
            return FAIL(ps, "%s must be a string", key);
        }
        *slot = g_steal_pointer(str);
    } else if (strcmp(key, "spice_tls") == 0 && qc->spice_tls < 0) {
        if (kind != V_NUMBER || (num != 0 && num != 1)) {
            return FAIL(ps, "spice_tls must be 0 or 1");
        }
        qc->spice_tls = (gint)num;
    }
    return TRUE;
}

static gboolean parse_statement(Parser *ps, QsQemuConf *qc)
{
    const char *start = ps->p;
    g_autofree char *key = NULL;
    g_autofree char *str = NULL;
    gint64 num = 0;
    Kind kind;

    if (!g_ascii_isalpha(*ps->p)) {
        return FAIL(ps, "a line must start with a name, a '#' comment or nothing");
    }
    while (ps->p < ps->end && (g_ascii_isalnum(*ps->p) || *ps->p == '_')) {
        ps->p++;
    }
    key = g_strndup(start, (gsize)(ps->p - start));
    skip_blanks(ps);
    if (!at(ps, '=')) {
        return FAIL(ps, "'=' must follow the name %s", key);
    }
    ps->p++;
    skip_blanks(ps);
    if (!parse_value(ps, 0, &kind, &str, &num) || !keep(qc, key, kind, &str, num, ps)) {
        return FALSE;
    }
    skip_blanks(ps);
    if (at(ps, '#')) {
        skip_line(ps);
    }
    if (at(ps, ';')) {
        ps->p++;
    } else if (ps->p < ps->end && !at(ps, '\n') && !at(ps, '\r')) {
        return FAIL(ps, "a line end or ';' must follow the value of %s", key);
    }
    return TRUE;
}

void qs_qemu_conf_clear(QsQemuConf *qc)
{
    g_clear_pointer(&qc->spice_listen, g_free);
    g_clear_pointer(&qc->spice_tls_dir, g_free);
    g_clear_pointer(&qc->default_tls_dir, g_free);
    qc->spice_tls = -1;
}

gboolean qs_qemu_conf_parse(const char *text, gsize len, const char *name, QsQemuConf *qc,
                            GError **error)
{
    Parser ps = { name, text, text + len, 1, error };

    memset(qc, 0, sizeof(*qc));
    qc->spice_tls = -1;
    if (len > QS_QEMU_CONF_MAX) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s: over %d bytes", name,
                    QS_QEMU_CONF_MAX);
        return FALSE;
    }
    if (memchr(text, '\0', len)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s: a NUL byte", name);
        return FALSE;
    }
    for (;;) {
        skip_space(&ps);
        if (ps.p >= ps.end) {
            return TRUE;
        }
        if (at(&ps, '#')) {
            skip_line(&ps);
        } else if (!parse_statement(&ps, qc)) {
            qs_qemu_conf_clear(qc);
            return FALSE;
        }
    }
}

gboolean qs_qemu_conf_load(const char *path, QsQemuConf *qc, GError **error)
{
    g_autofree char *text = NULL;
    struct stat st;
    gsize len = 0;
    int fd;

    memset(qc, 0, sizeof(*qc));
    qc->spice_tls = -1;
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == ENOENT) {
        return TRUE;
    }
    /* A regular file, read within the bound: never a device or a FIFO. */
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
        st.st_size > QS_QEMU_CONF_MAX) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s: %s", path,
                    fd < 0 ? g_strerror(errno) : !S_ISREG(st.st_mode)
                    ? "not a regular file" : "too large for libvirt's qemu.conf");
        if (fd >= 0) {
            close(fd);
        }
        return FALSE;
    }
    text = g_malloc((gsize)st.st_size + 1);
    while (len < (gsize)st.st_size) {
        ssize_t n = read(fd, text + len, (gsize)st.st_size - len);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        len += (gsize)n;
    }
    close(fd);
    return qs_qemu_conf_parse(text, len, path, qc, error);
}
