/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The console page's table of answers (qs-web.h). */
#include "net/qs-web.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <gio/gio.h>

#include "qs-web-resources.h"

#define RESOURCE_PREFIX "/org/qemu-spice/web/"
#define HTML5_PREFIX "/spice-html5/"
#define TOKEN_STATE_PATH "/qs/token-state"

#define TYPE_HTML "text/html; charset=utf-8"
#define TYPE_JS "text/javascript; charset=utf-8"
#define TYPE_CSS "text/css; charset=utf-8"
#define TYPE_JSON "application/json"
#define TYPE_TEXT "text/plain; charset=utf-8"

/* spice-html5 sets a cursor as a data: image and plays sound and video from
 * blob: URLs; nothing else comes from anywhere but this origin. */
#define CSP "default-src 'none'; script-src 'self'; style-src 'self'; " \
            "img-src 'self' data: blob:; media-src 'self' blob:; connect-src 'self'; " \
            "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/* An asset is kept as it is served: the page's own files as built in
 * (read-only data of the binary), spice-html5's gzipped, which every
 * browser takes (Accept-Encoding) and which costs an idle helper a quarter
 * of the copy's memory; a client that takes no gzip gets it inflated. */
typedef struct {
    GBytes *data;
    gboolean gzip;
    const char *type;       /* static */
} Asset;

struct QsWeb {
    gint refs;
    GHashTable *assets;     /* path → Asset */
    guint n_files;          /* spice-html5's */
    gsize total;            /* their size */
    gsize kept;             /* what they take in memory */
    char *missing;          /* why spice-html5 is not served, or NULL */
};

static void asset_free(gpointer p)
{
    Asset *a = p;

    g_bytes_unref(a->data);
    g_free(a);
}

/* `in` through a zlib converter (ours, on our own data: the output's size
 * is bounded by what was read at start). */
static GBytes *convert(GConverter *converter, GBytes *in)
{
    g_autoptr(GOutputStream) mem = g_memory_output_stream_new_resizable();
    g_autoptr(GOutputStream) out = g_converter_output_stream_new(mem, converter);
    gsize len;
    const void *data = g_bytes_get_data(in, &len);

    g_object_unref(converter);
    if (!g_output_stream_write_all(out, data, len, NULL, NULL, NULL) ||
        !g_output_stream_close(out, NULL, NULL)) {
        return NULL;
    }
    return g_memory_output_stream_steal_as_bytes(G_MEMORY_OUTPUT_STREAM(mem));
}

static const char *type_of(const char *name)
{
    return g_str_has_suffix(name, ".css") ? TYPE_CSS
         : g_str_has_suffix(name, ".html") ? TYPE_HTML : TYPE_JS;
}

static void add(QsWeb *web, const char *path, const char *name, GBytes *data, gboolean gzip)
{
    Asset *a = g_new0(Asset, 1);

    a->data = data;
    a->gzip = gzip;
    a->type = type_of(name);
    g_hash_table_replace(web->assets, g_strdup(path), a);
}

QsWeb *qs_web_new_empty(void)
{
    static const struct {
        const char *path, *resource;
    } own[] = {
        { "/", "console.html" },
        { "/qs/console.js", "console.js" },
        { "/qs/console.css", "console.css" },
    };
    QsWeb *web = g_new0(QsWeb, 1);

    web->refs = 1;
    web->assets = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, asset_free);
    for (guint i = 0; i < G_N_ELEMENTS(own); i++) {
        g_autofree char *r = g_strconcat(RESOURCE_PREFIX, own[i].resource, NULL);
        GBytes *data = g_resource_lookup_data(qs_web_get_resource(), r, 0, NULL);

        g_assert(data);     /* built in */
        add(web, own[i].path, own[i].resource, data, FALSE);
    }
    return web;
}

void qs_web_add_file(QsWeb *web, const char *name, GBytes *data)
{
    g_autofree char *path = g_strconcat(HTML5_PREFIX, name, NULL);
    GBytes *gz = convert(G_CONVERTER(g_zlib_compressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP, 6)),
                         data);

    web->n_files++;
    web->total += g_bytes_get_size(data);
    web->kept += g_bytes_get_size(gz ? gz : data);
    add(web, path, name, gz ? gz : g_bytes_ref(data), gz != NULL);
}

/* One file, bounded. NULL when it is not a regular file
 * (a directory, a device, a symbolic link: the open refused it). */
static GBytes *read_bounded(int dir_fd, const char *name, gsize room, GError **error)
{
    int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat st;
    g_autofree guint8 *buf = NULL;
    gsize have = 0;

    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0) {
            close(fd);
        }
        return NULL;
    }
    if ((guint64)st.st_size > MIN(room, QS_WEB_MAX_FILE)) {
        close(fd);
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NO_SPACE,
                    "%s: %jd bytes, over the console page's bound (%u per file, %u in all)",
                    name, (intmax_t)st.st_size, QS_WEB_MAX_FILE, QS_WEB_MAX_TOTAL);
        return NULL;
    }
    buf = g_malloc((gsize)st.st_size + 1);
    /* A file that grows meanwhile is cut at the size it had. */
    while (have < (gsize)st.st_size) {
        ssize_t n = read(fd, buf + have, (gsize)st.st_size - have);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        have += (gsize)n;
    }
    close(fd);
    return g_bytes_new_take(g_steal_pointer(&buf), have);
}

/* The regular *.js (and *.css with `css`) files of one directory. */
static gboolean read_dir(QsWeb *web, const char *dir, const char *sub, gboolean css,
                         GError **error)
{
    g_autofree char *path = sub ? g_build_filename(dir, sub, NULL) : g_strdup(dir);
    g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
    int dir_fd;
    const char *name;
    gboolean ok = TRUE;

    if (!d) {
        return TRUE;
    }
    dir_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    while (ok && dir_fd >= 0 && (name = g_dir_read_name(d))) {
        g_autofree char *rel = sub ? g_strconcat(sub, "/", name, NULL) : g_strdup(name);
        g_autoptr(GError) err = NULL;
        GBytes *data;

        if (!g_str_has_suffix(name, ".js") && !(css && g_str_has_suffix(name, ".css"))) {
            continue;
        }
        if (web->n_files >= QS_WEB_MAX_FILES) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_NO_SPACE,
                        "%s: over %u files for the console page", dir, QS_WEB_MAX_FILES);
            ok = FALSE;
            break;
        }
        data = read_bounded(dir_fd, name, QS_WEB_MAX_TOTAL - web->total, &err);
        if (err) {
            g_propagate_prefixed_error(error, g_steal_pointer(&err), "%s/", path);
            ok = FALSE;
        } else if (data) {
            qs_web_add_file(web, rel, data);
            g_bytes_unref(data);
        }
    }
    if (dir_fd >= 0) {
        close(dir_fd);
    }
    return ok;
}

QsWeb *qs_web_new(const char *dir, gboolean required, GError **error)
{
    g_autoptr(QsWeb) web = qs_web_new_empty();
    g_autofree char *main_js = g_build_filename(dir, "main.js", NULL);

    if (!g_file_test(main_js, G_FILE_TEST_IS_REGULAR)) {
        web->missing = g_strdup_printf("spice-html5 is not installed on this host: no %s "
                                       "(Debian's package spice-html5)", main_js);
        if (required) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "%s", web->missing);
            return NULL;
        }
        return g_steal_pointer(&web);
    }
    if (!read_dir(web, dir, NULL, TRUE, error) ||
        !read_dir(web, dir, "thirdparty", FALSE, error)) {
        return NULL;
    }
#ifdef __GLIBC__
    /* The files as read and zlib's work buffers are freed now, but their
     * pages stay in the heap, in every helper's resident memory, unless
     * handed back. */
    malloc_trim(0);
#endif
    return g_steal_pointer(&web);
}

QsWeb *qs_web_ref(QsWeb *web)
{
    g_atomic_int_inc(&web->refs);
    return web;
}

void qs_web_unref(QsWeb *web)
{
    if (web && g_atomic_int_dec_and_test(&web->refs)) {
        g_hash_table_unref(web->assets);
        g_free(web->missing);
        g_free(web);
    }
}

guint qs_web_n_files(const QsWeb *web)
{
    return web->n_files;
}

gsize qs_web_total_bytes(const QsWeb *web)
{
    return web->total;
}

gsize qs_web_kept_bytes(const QsWeb *web)
{
    return web->kept;
}

const char *qs_web_missing(const QsWeb *web)
{
    return web->missing;
}

const char *qs_web_token_state(QsTokenStatus status)
{
    switch (status) {
    case QS_TOKEN_VALID:
        return "valid";
    case QS_TOKEN_NOT_A_TOKEN:
        return "ticket";
    case QS_TOKEN_EXPIRED:
        return "expired";
    case QS_TOKEN_REPLAYED:
        return "used";
    case QS_TOKEN_CACHE_FULL:
        return "busy";
    default:
        return "wrong";
    }
}

static void answer(QsWebResponse *resp, guint status, const char *reason, const char *type,
                   GBytes *body, const char *extra)
{
    GString *h = g_string_new(NULL);

    g_string_append_printf(h, "HTTP/1.1 %u %s\r\n"
                           "Content-Type: %s\r\n"
                           "Content-Length: %" G_GSIZE_FORMAT "\r\n"
                           "Content-Security-Policy: " CSP "\r\n"
                           "Cache-Control: no-store\r\n"
                           "X-Content-Type-Options: nosniff\r\n"
                           "X-Frame-Options: DENY\r\n"
                           "Referrer-Policy: no-referrer\r\n"
                           "Cross-Origin-Opener-Policy: same-origin\r\n"
                           "Cross-Origin-Resource-Policy: same-origin\r\n"
                           "%s"
                           "Connection: close\r\n\r\n",
                           status, reason, type, g_bytes_get_size(body), extra ? extra : "");
    resp->status = status;
    resp->head = g_string_free_to_bytes(h);
    resp->body = body;
}

static void answer_text(QsWebResponse *resp, guint status, const char *reason,
                        const char *text, const char *extra)
{
    answer(resp, status, reason, TYPE_TEXT, g_bytes_new(text, strlen(text)), extra);
}

static void token_state(const QsHttpRequest *req, QsWebTokenCheck check, gpointer data,
                        QsWebResponse *resp)
{
    const char *auth = req->authorization;
    g_autofree char *json = NULL;

    if (!auth || g_ascii_strncasecmp(auth, "Bearer ", 7) != 0 || !auth[7]) {
        answer_text(resp, 400, "Bad Request", "no Authorization: Bearer credential\n", NULL);
        return;
    }
    resp->token_checked = TRUE;
    resp->token = check ? check(auth + 7, strlen(auth + 7), data) : QS_TOKEN_NOT_A_TOKEN;
    json = g_strdup_printf("{\"state\":\"%s\"}\n", qs_web_token_state(resp->token));
    answer(resp, 200, "OK", TYPE_JSON, g_bytes_new(json, strlen(json)), NULL);
}

void qs_web_respond(QsWeb *web, const QsHttpRequest *req, QsWebTokenCheck check,
                    gpointer data, QsWebResponse *resp)
{
    Asset *a;

    memset(resp, 0, sizeof(*resp));
    resp->token = QS_TOKEN_NOT_A_TOKEN;
    if (strcmp(req->method, "GET") != 0) {
        answer_text(resp, 405, "Method Not Allowed", "only GET is served here\n",
                    "Allow: GET\r\n");
        return;
    }
    if (strcmp(req->path, "/") == 0 && req->has_query) {
        /* A token in a query would be in every log on its way. */
        answer_text(resp, 400, "Bad Request",
                    "the console page takes its token after '#', never after '?'\n", NULL);
        return;
    }
    if (req->has_query) {
        answer_text(resp, 404, "Not Found", "not found\n", NULL);
        return;
    }
    if (strcmp(req->path, TOKEN_STATE_PATH) == 0) {
        token_state(req, check, data, resp);
        return;
    }
    if (web->missing && strcmp(req->path, "/") == 0) {
        g_autofree char *text = g_strconcat(web->missing, "\n", NULL);

        answer_text(resp, 503, "Service Unavailable", text, NULL);
        return;
    }
    a = g_hash_table_lookup(web->assets, req->path);
    if (!a) {
        answer_text(resp, 404, "Not Found", "not found\n", NULL);
        return;
    }
    if (!a->gzip) {
        answer(resp, 200, "OK", a->type, g_bytes_ref(a->data), NULL);
    } else if (qs_http_accepts(req->accept_encoding, "gzip")) {
        answer(resp, 200, "OK", a->type, g_bytes_ref(a->data), "Content-Encoding: gzip\r\n");
    } else {
        GBytes *plain = convert(G_CONVERTER(g_zlib_decompressor_new(
                                    G_ZLIB_COMPRESSOR_FORMAT_GZIP)), a->data);

        if (plain) {
            answer(resp, 200, "OK", a->type, plain, NULL);
        } else {
            answer_text(resp, 500, "Internal Server Error", "the file did not inflate\n",
                        NULL);
        }
    }
}

void qs_web_response_clear(QsWebResponse *resp)
{
    g_clear_pointer(&resp->head, g_bytes_unref);
    g_clear_pointer(&resp->body, g_bytes_unref);
}
