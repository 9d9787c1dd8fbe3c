/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ControlFake: QsControlOps that record what the control door passed them. */
#include "control-fake.h"

#include <gio/gio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static gboolean fake_set_ticket(const char *password, gsize len,
                                gint64 expiry_us, gboolean disconnect,
                                guint *kept, gpointer data, GError **error)
{
    ControlFake *f = data;

    if (len == 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "empty password");
        return FALSE;
    }
    g_free(f->password);
    f->password = g_strndup(password, len);
    f->expiry_us = expiry_us;
    f->disconnect = disconnect;
    if (disconnect) {
        f->clients = 0;
    }
    *kept = f->clients;
    return TRUE;
}

static gboolean fake_set_view_ticket(const char *password, gsize len, gint64 expiry_us,
                                     gpointer data, GError **error)
{
    ControlFake *f = data;

    if (f->password && len == strlen(f->password) && memcmp(password, f->password, len) == 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "must differ");
        return FALSE;
    }
    g_free(f->view_password);
    f->view_password = g_strndup(password, len);
    f->view_expiry_us = expiry_us;
    return TRUE;
}

static gboolean fake_set_token_keys(const char *text, gsize len, gpointer data,
                                    GError **error)
{
    ControlFake *f = data;

    if (!g_strstr_len(text, (gssize)len, "[tokens]")) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "not a key file");
        return FALSE;
    }
    g_free(f->token_keys);
    f->token_keys = g_strndup(text, len);
    return TRUE;
}

static gboolean fake_add_client(int fd, gboolean skip_auth, gboolean tls, gpointer data,
                                GError **error)
{
    ControlFake *f = data;
    struct stat st;

    f->added_was_socket = fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
    close(fd);
    if (tls) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "no TLS listener");
        return FALSE;
    }
    f->added++;
    f->added_skipauth = skip_auth;
    f->added_tls = tls;
    return TRUE;
}

static gboolean fake_disconnect(const char *address, gpointer data, GError **error)
{
    ControlFake *f = data;

    if (f->clients == 0 || strcmp(address, "127.0.0.1:5000") != 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "no such client");
        return FALSE;
    }
    f->clients--;
    return TRUE;
}

static gboolean fake_set_certs(const guint8 *cert, gsize cert_len,
                               const guint8 *key, gsize key_len,
                               gpointer data, GError **error)
{
    ControlFake *f = data;

    (void)key;
    if (key_len < 10) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "bad key");
        return FALSE;
    }
    g_free(f->cert);
    f->cert = g_strndup((const char *)cert, cert_len);
    f->cert_len = cert_len;
    f->key_len = key_len;
    return TRUE;
}

static GVariant *fake_clients(gpointer data)
{
    ControlFake *f = data;
    GVariantBuilder b;

    g_variant_builder_init(&b, G_VARIANT_TYPE("aa{sv}"));
    for (guint i = 0; i < f->clients; i++) {
        g_variant_builder_open(&b, G_VARIANT_TYPE_VARDICT);
        g_variant_builder_add(&b, "{sv}", "address",
                              g_variant_new_string("127.0.0.1:5000"));
        g_variant_builder_close(&b);
    }
    return g_variant_builder_end(&b);
}

const QsControlOps control_fake_ops = {
    .set_ticket = fake_set_ticket,
    .set_view_ticket = fake_set_view_ticket,
    .set_token_keys = fake_set_token_keys,
    .add_client = fake_add_client,
    .disconnect_client = fake_disconnect,
    .set_certificates = fake_set_certs,
    .list_clients = fake_clients,
};

void control_fake_clear(ControlFake *fake)
{
    g_clear_pointer(&fake->password, g_free);
    g_clear_pointer(&fake->cert, g_free);
    g_clear_pointer(&fake->view_password, g_free);
    g_clear_pointer(&fake->token_keys, g_free);
}
