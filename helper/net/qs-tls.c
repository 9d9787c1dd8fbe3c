/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Loading the TLS module on first use and calling through its table. */
#include "net/qs-tls.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>
#include <gio/gio.h>

#include "net/qs-tls-module.h"

/* Written once, under the GOnce, before any session exists. */
static const QsTlsModuleOps *ops;
static char *load_failure;

/* The module lies in one of the directories the helper's own libraries are
 * searched in: its RUNPATH names the build tree's helper/net, or the
 * installed module directory, so a helper loads the module built with it.
 * The directories are asked for (dlinfo) rather than left to dlopen's own
 * search, which takes the RUNPATH of dlopen's caller: under a sanitizer
 * that is the runtime's interceptor, not the helper. */
static void *open_module(void)
{
    void *self = dlopen(NULL, RTLD_NOW);
    Dl_serinfo size;
    g_autofree Dl_serinfo *info = NULL;
    g_autoptr(GString) searched = g_string_new(NULL);

    if (!self || dlinfo(self, RTLD_DI_SERINFOSIZE, &size) != 0) {
        load_failure = g_strdup_printf("TLS is not available: the helper's library "
                                       "path: %s", dlerror());
        return NULL;
    }
    info = g_malloc(size.dls_size);
    info->dls_size = size.dls_size;
    info->dls_cnt = size.dls_cnt;
    if (dlinfo(self, RTLD_DI_SERINFO, info) != 0) {
        load_failure = g_strdup_printf("TLS is not available: the helper's library "
                                       "path: %s", dlerror());
        return NULL;
    }
    for (unsigned int i = 0; i < info->dls_cnt; i++) {
        const char *dir = info->dls_serpath[i].dls_name;
        g_autofree char *path = g_build_filename(dir, QS_TLS_MODULE_FILE, NULL);
        void *handle;

        if (access(path, F_OK) != 0) {
            g_string_append_printf(searched, "%s%s", searched->len ? ", " : "", dir);
            continue;
        }
        handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            load_failure = g_strdup_printf("TLS is not available: %s", dlerror());
        }
        return handle;
    }
    load_failure = g_strdup_printf("TLS is not available: no %s in %s",
                                   QS_TLS_MODULE_FILE, searched->str);
    return NULL;
}

/* Never unloaded. */
static gpointer load_once(gpointer unused)
{
    const QsTlsModuleOps *table;
    void *handle;

    (void)unused;
    handle = open_module();
    if (!handle) {
        return NULL;
    }
    table = dlsym(handle, QS_TLS_MODULE_SYMBOL);
    if (!table || table->abi != QS_TLS_MODULE_ABI) {
        load_failure = g_strdup_printf("TLS is not available: %s is from another "
                                       "build (interface %u, this helper's %u)",
                                       QS_TLS_MODULE_FILE, table ? table->abi : 0,
                                       QS_TLS_MODULE_ABI);
        dlclose(handle);
        return NULL;
    }
    ops = table;
    return NULL;
}

gboolean qs_tls_load(GError **error)
{
    static GOnce once = G_ONCE_INIT;

    g_once(&once, load_once, NULL);
    if (!ops) {
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                            load_failure);
        return FALSE;
    }
    return TRUE;
}

QsTlsCreds *qs_tls_creds_load(const char *dir, GError **error)
{
    return qs_tls_load(error) ? ops->creds_load(dir, error) : NULL;
}

QsTlsCreds *qs_tls_creds_new_from_pem(const guint8 *cert, gsize cert_len,
                                      const guint8 *key, gsize key_len,
                                      GError **error)
{
    if (!qs_tls_load(error)) {
        return NULL;
    }
    return ops->creds_new_from_pem(cert, cert_len, key, key_len, error);
}

/* Credentials and sessions exist only once the module is loaded. */
QsTlsCreds *qs_tls_creds_ref(QsTlsCreds *creds)
{
    return ops->creds_ref(creds);
}

void qs_tls_creds_unref(QsTlsCreds *creds)
{
    if (creds) {
        ops->creds_unref(creds);
    }
}

QsTlsSession *qs_tls_session_new(QsTlsCreds *creds, int fd, GError **error)
{
    return ops->session_new(creds, fd, error);
}

void qs_tls_session_free(QsTlsSession *session)
{
    if (session) {
        ops->session_free(session);
    }
}

int qs_tls_session_handshake(QsTlsSession *session, gboolean *want_write,
                             GError **error)
{
    return ops->handshake(session, want_write, error);
}

gssize qs_tls_session_recv(QsTlsSession *session, void *buf, gsize len,
                           GError **error)
{
    return ops->recv(session, buf, len, error);
}

gssize qs_tls_session_send(QsTlsSession *session, const void *buf, gsize len,
                           GError **error)
{
    return ops->send(session, buf, len, error);
}

gboolean qs_tls_session_pending(QsTlsSession *session)
{
    return ops->pending(session);
}
