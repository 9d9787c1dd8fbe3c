/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reads qemu-spice.conf: a GKeyFile whose every key is checked
 * (qs-launch-keyfile.h), so a typo is an error that names the file and the
 * key instead of a silent default. */

#include <errno.h>
#include <pwd.h>
#include <string.h>
#include <gio/gio.h>
#include "qs-launch-config.h"
#include "qs-launch-keyfile.h"
#include "qs-launch-qemu-conf.h"

static const QsKeyFileGroup known[] = {
    { "launcher", { "uri", "run-dir", "autostart", "autostart-domains",
                    "supervise", "restart-backoff-max", "wait", "qemu-conf", NULL } },
    { "listen", { "address", "ports", "plain", "tls", "tls-dir",
                  "secure-channels", "host", "public-address", "proxy-only", NULL } },
    { "ticket", { "lifetime", "token-keys", NULL } },
    { "helper", { "path", "user", "log-dir", "max-fps", "console-page", NULL } },
    { "sessions", { "max", "when-full", NULL } },
};

#define BAD(key_group, key, ...) \
    qs_keyfile_bad(error, name, key_group, key, g_strdup_printf(__VA_ARGS__))

static gboolean parse_ports(const char *name, const char *v, guint *min,
                            guint *max, GError **error)
{
    g_auto(GStrv) parts = g_strsplit(v, "-", 3);
    guint64 lo = 0, hi = 0;

    if (g_strv_length(parts) == 0 || g_strv_length(parts) > 2 ||
        !g_ascii_string_to_unsigned(parts[0], 10, 1, 65535, &lo, NULL) ||
        (parts[1] &&
         !g_ascii_string_to_unsigned(parts[1], 10, 1, 65535, &hi, NULL))) {
        return BAD("listen", "ports", "'%s' is not PORT or FIRST-LAST with "
                   "ports from 1 to 65535", v);
    }
    if (!parts[1]) {
        hi = lo;
    }
    if (hi < lo) {
        return BAD("listen", "ports", "'%s': the last port is below the first", v);
    }
    *min = (guint)lo;
    *max = (guint)hi;
    return TRUE;
}

static gboolean parse_address(const char *name, const char *key, const char *v,
                              GError **error)
{
    g_autoptr(GInetAddress) addr = g_inet_address_new_from_string(v);

    if (!addr) {
        return BAD("listen", key, "'%s' is not a numeric IPv4 or IPv6 address", v);
    }
    return TRUE;
}

static gboolean parse_autostart(const char *name, const char *v,
                                QsAutostart *out, GError **error)
{
    for (QsAutostart a = QS_AUTOSTART_NONE; a <= QS_AUTOSTART_ALL; a++) {
        if (strcmp(v, qs_autostart_to_string(a)) == 0) {
            *out = a;
            return TRUE;
        }
    }
    return BAD("launcher", "autostart", "'%s' is not one of none, metadata, "
               "list, all", v);
}

static gboolean resolve_user(QsLaunchConfig *cfg, const char *name,
                             GError **error)
{
    struct passwd *pw;

    errno = 0;
    pw = getpwnam(cfg->helper_user);
    if (!pw) {
        return BAD("helper", "user", "no such user '%s'", cfg->helper_user);
    }
    cfg->helper_uid = pw->pw_uid;
    cfg->helper_gid = pw->pw_gid;
    return TRUE;
}

/* libvirt's qemu.conf defaults: spice_tls_x509_cert_dir, and
 * default_tls_x509_cert_dir, which libvirt takes when the first does not
 * exist. The file names inside are libvirt's too (ca-cert.pem,
 * server-cert.pem, server-key.pem), so one set of certificates serves a
 * host's SPICE consoles whichever server speaks for them. */
const char *const qs_libvirt_spice_tls_dirs[] = {
    "/etc/pki/libvirt-spice", "/etc/pki/qemu", NULL
};

/* What [listen] does not say, libvirt's qemu.conf does for its own SPICE
 * servers: spice_listen (default 127.0.0.1), spice_tls, and
 * spice_tls_x509_cert_dir, which libvirt takes when it exists and otherwise
 * default_tls_x509_cert_dir (SYSCONFDIR/pki/qemu unless set). */
#define QEMU_CONF_ERROR "libvirt's qemu.conf, read for what [listen] does not say " \
                        "([launcher] qemu-conf): "

static gboolean libvirt_defaults(QsLaunchConfig *cfg, GKeyFile *kf, GError **error)
{
    QsQemuConf qc;
    gboolean ok = TRUE;

    if (!qs_qemu_conf_load(cfg->qemu_conf, &qc, error)) {
        g_prefix_error(error, QEMU_CONF_ERROR);
        return FALSE;
    }
    if (!g_key_file_has_key(kf, "listen", "address", NULL)) {
        g_autoptr(GInetAddress) addr = qc.spice_listen ?
            g_inet_address_new_from_string(qc.spice_listen) : NULL;

        if (qc.spice_listen && !addr) {
            g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                        QEMU_CONF_ERROR "%s: spice_listen '%s' is not a numeric address: "
                        "set [listen] address in qemu-spice.conf", cfg->qemu_conf,
                        qc.spice_listen);
            ok = FALSE;
        } else {
            g_free(cfg->listen_address);
            cfg->listen_address = g_strdup(qc.spice_listen ? qc.spice_listen : "127.0.0.1");
            cfg->listen_from = qc.spice_listen ? "qemu.conf spice_listen"
                                               : "libvirt's default for SPICE";
        }
    }
    if (!g_key_file_has_key(kf, "listen", "tls", NULL) && qc.spice_tls >= 0) {
        cfg->tls = qc.spice_tls == 1;
    }
    if (!g_key_file_has_key(kf, "listen", "tls-dir", NULL)) {
        g_free(cfg->tls_dir);
        if (qc.spice_tls_dir) {
            cfg->tls_dir = g_strdup(qc.spice_tls_dir);
        } else if (qc.default_tls_dir &&
                   !g_file_test(qs_libvirt_spice_tls_dirs[0], G_FILE_TEST_IS_DIR)) {
            cfg->tls_dir = g_strdup(qc.default_tls_dir);
        } else {
            cfg->tls_dir = qs_launch_config_default_tls_dir(qs_libvirt_spice_tls_dirs);
        }
    }
    qs_qemu_conf_clear(&qc);
    return ok;
}

char *qs_launch_config_default_tls_dir(const char *const *candidates)
{
    for (guint i = 0; candidates[i]; i++) {
        if (g_file_test(candidates[i], G_FILE_TEST_IS_DIR)) {
            return g_strdup(candidates[i]);
        }
    }
    return g_strdup(candidates[0]);
}

/* The dedicated user that the installed sysusers.d snippet creates
 * (launcher/qemu-spice.sysusers), as the helper itself prefers it; nobody
 * on hosts without it (a build tree not installed). */
const char *const qs_helper_users[] = { "qemu-spice", "nobody", NULL };

char *qs_launch_config_default_user(const char *const *candidates)
{
    for (guint i = 0; candidates[i]; i++) {
        if (getpwnam(candidates[i])) {
            return g_strdup(candidates[i]);
        }
    }
    return g_strdup(candidates[0]);
}

static void set_defaults(QsLaunchConfig *cfg)
{
    cfg->uri = g_strdup("qemu:///system");
    cfg->run_dir = g_strdup("/run/qemu-spice");
    cfg->autostart = QS_AUTOSTART_METADATA;
    cfg->autostart_domains = g_new0(char *, 1);
    cfg->supervise = TRUE;
    cfg->backoff_max_s = 30;
    cfg->wait_s = 60;
    cfg->qemu_conf = g_strdup(QS_QEMU_CONF_DEFAULT);
    cfg->listen_address = g_strdup("127.0.0.1");
    cfg->listen_from = "libvirt's default for SPICE";
    /* Below libvirt's own allocators (qemu.conf: remote_display_port_min
     * 5900 for VNC/SPICE autoport, remote_websocket_port_min 5700), which
     * would otherwise hand qemu a port we hold; docs/operations.md says
     * why this range and how to align the two. */
    cfg->port_min = 5500;
    cfg->port_max = 5599;
    cfg->plain = TRUE;
    cfg->tls = FALSE;
    cfg->ticket_lifetime_s = 0;
    cfg->helper_path = g_strdup(QS_HELPER_PATH);
    cfg->helper_user = qs_launch_config_default_user(qs_helper_users);
    cfg->log_dir = g_strdup("/var/log/qemu-spice");
    cfg->max_fps = 30;
    cfg->console_page = TRUE;
    cfg->max_sessions = 4;
    cfg->when_full = g_strdup("refuse");
}

static gboolean apply(QsLaunchConfig *cfg, GKeyFile *kf, const char *name,
                      GError **error)
{
    g_autofree char *v = NULL;

    if (!qs_keyfile_check_known(kf, name, known, G_N_ELEMENTS(known), error)) {
        return FALSE;
    }
    if ((v = qs_keyfile_string(kf, "launcher", "uri"))) {
        if (!*v) {
            return BAD("launcher", "uri", "empty");
        }
        g_free(cfg->uri);
        cfg->uri = g_steal_pointer(&v);
    }
    if (!qs_keyfile_abs_path(kf, name, "launcher", "run-dir", &cfg->run_dir, error)) {
        return FALSE;
    }
    if ((v = qs_keyfile_string(kf, "launcher", "autostart")) &&
        !parse_autostart(name, v, &cfg->autostart, error)) {
        return FALSE;
    }
    g_clear_pointer(&v, g_free);
    if (g_key_file_has_key(kf, "launcher", "autostart-domains", NULL)) {
        g_strfreev(cfg->autostart_domains);
        cfg->autostart_domains = g_key_file_get_string_list(
            kf, "launcher", "autostart-domains", NULL, NULL);
        if (!cfg->autostart_domains) {
            cfg->autostart_domains = g_new0(char *, 1);
        }
        for (guint i = 0; cfg->autostart_domains[i]; i++) {
            if (!*cfg->autostart_domains[i] ||
                strchr(cfg->autostart_domains[i], '/')) {
                return BAD("launcher", "autostart-domains", "'%s' is not a "
                           "domain name", cfg->autostart_domains[i]);
            }
        }
    }
    if (!qs_keyfile_bool(kf, name, "launcher", "supervise", &cfg->supervise, error) ||
        !qs_keyfile_uint(kf, name, "launcher", "restart-backoff-max", 1, 3600,
                  &cfg->backoff_max_s, error) ||
        !qs_keyfile_uint(kf, name, "launcher", "wait", 1, 3600, &cfg->wait_s, error) ||
        !qs_keyfile_abs_path(kf, name, "launcher", "qemu-conf", &cfg->qemu_conf, error)) {
        return FALSE;
    }
    if ((v = qs_keyfile_string(kf, "listen", "address"))) {
        if (!parse_address(name, "address", v, error)) {
            return FALSE;
        }
        g_free(cfg->listen_address);
        cfg->listen_address = g_steal_pointer(&v);
        cfg->listen_from = "[listen] address";
    }
    if ((v = qs_keyfile_string(kf, "listen", "public-address"))) {
        if (!parse_address(name, "public-address", v, error)) {
            return FALSE;
        }
        cfg->public_address = g_steal_pointer(&v);
    }
    if ((v = qs_keyfile_string(kf, "listen", "ports")) &&
        !parse_ports(name, v, &cfg->port_min, &cfg->port_max, error)) {
        return FALSE;
    }
    g_clear_pointer(&v, g_free);
    if (!qs_keyfile_bool(kf, name, "listen", "proxy-only", &cfg->proxy_only, error) ||
        !qs_keyfile_bool(kf, name, "listen", "plain", &cfg->plain, error) ||
        !qs_keyfile_bool(kf, name, "listen", "tls", &cfg->tls, error) ||
        !qs_keyfile_abs_path(kf, name, "listen", "tls-dir", &cfg->tls_dir, error)) {
        return FALSE;
    }
    cfg->tls_dir_set = cfg->tls_dir != NULL;
    if (!libvirt_defaults(cfg, kf, error)) {
        return FALSE;
    }
    if ((v = qs_keyfile_string(kf, "listen", "secure-channels"))) {
        if (!*v || strspn(v, "abcdefghijklmnopqrstuvwxyz,") != strlen(v)) {
            return BAD("listen", "secure-channels", "'%s' is not 'all' or a "
                       "comma list of channel names", v);
        }
        g_free(cfg->secure_channels);
        cfg->secure_channels = g_steal_pointer(&v);
    }
    if ((v = qs_keyfile_string(kf, "listen", "host"))) {
        if (!*v || strpbrk(v, " \t\n/?#@\"'")) {
            return BAD("listen", "host", "'%s' is not a host name or address", v);
        }
        g_free(cfg->console_host);
        cfg->console_host = g_steal_pointer(&v);
    }
    if (!qs_keyfile_uint(kf, name, "ticket", "lifetime", 0, 10u * 365 * 86400,
                  &cfg->ticket_lifetime_s, error) ||
        !qs_keyfile_abs_path(kf, name, "ticket", "token-keys", &cfg->token_keys, error) ||
        !qs_keyfile_abs_path(kf, name, "helper", "path", &cfg->helper_path, error) ||
        !qs_keyfile_abs_path(kf, name, "helper", "log-dir", &cfg->log_dir, error)) {
        return FALSE;
    }
    if ((v = qs_keyfile_string(kf, "helper", "user"))) {
        if (!*v) {
            return BAD("helper", "user", "empty");
        }
        g_free(cfg->helper_user);
        cfg->helper_user = g_steal_pointer(&v);
    }
    if (!qs_keyfile_uint(kf, name, "helper", "max-fps", 1, 30, &cfg->max_fps, error) ||
        !qs_keyfile_bool(kf, name, "helper", "console-page", &cfg->console_page, error) ||
        !qs_keyfile_uint(kf, name, "sessions", "max", 1, 16, &cfg->max_sessions, error)) {
        return FALSE;
    }
    g_clear_pointer(&v, g_free);
    if ((v = qs_keyfile_string(kf, "sessions", "when-full"))) {
        if (strcmp(v, "refuse") != 0 && strcmp(v, "replace") != 0) {
            return BAD("sessions", "when-full", "'%s' is not 'refuse' or 'replace'", v);
        }
        g_free(cfg->when_full);
        cfg->when_full = g_steal_pointer(&v);
    }
    if (!cfg->plain && !cfg->tls) {
        return BAD("listen", "plain", "both plain and tls are false: the "
                   "helper would have no listener");
    }
    if (cfg->secure_channels && !cfg->tls) {
        return BAD("listen", "secure-channels", "needs tls=true");
    }
    if (cfg->proxy_only && cfg->token_keys) {
        return BAD("listen", "proxy-only", "a proxy-only console takes no credential, "
                   "so no tokens either: remove [ticket] token-keys or this");
    }
    return resolve_user(cfg, name, error);
}

static QsLaunchConfig *load(GKeyFile *kf, const char *name, GError **error)
{
    g_autoptr(QsLaunchConfig) cfg = g_new0(QsLaunchConfig, 1);

    set_defaults(cfg);
    if (name) {
        cfg->path = g_strdup(name);
    }
    if (!apply(cfg, kf, name ? name : "(defaults)", error)) {
        return NULL;
    }
    return g_steal_pointer(&cfg);
}

QsLaunchConfig *qs_launch_config_load_data(const char *data, const char *name,
                                           GError **error)
{
    g_autoptr(GKeyFile) kf = g_key_file_new();
    g_autoptr(GError) err = NULL;

    if (!g_key_file_load_from_data(kf, data, (gsize)-1, G_KEY_FILE_NONE, &err)) {
        g_set_error(error, err->domain, err->code, "%s: %s", name, err->message);
        return NULL;
    }
    return load(kf, name, error);
}

QsLaunchConfig *qs_launch_config_load(const char *path, GError **error)
{
    g_autoptr(GKeyFile) kf = g_key_file_new();
    g_autoptr(GError) err = NULL;
    const char *file = path ? path : QS_LAUNCH_DEFAULT_CONFIG;

    if (!g_key_file_load_from_file(kf, file, G_KEY_FILE_NONE, &err)) {
        if (!path && g_error_matches(err, G_FILE_ERROR, G_FILE_ERROR_NOENT)) {
            return load(kf, NULL, error);
        }
        g_set_error(error, err->domain, err->code, "%s: %s", file, err->message);
        return NULL;
    }
    return load(kf, file, error);
}

void qs_launch_config_free(QsLaunchConfig *cfg)
{
    if (!cfg) {
        return;
    }
    g_free(cfg->path);
    g_free(cfg->uri);
    g_free(cfg->run_dir);
    g_strfreev(cfg->autostart_domains);
    g_free(cfg->listen_address);
    g_free(cfg->qemu_conf);
    g_free(cfg->public_address);
    g_free(cfg->tls_dir);
    g_free(cfg->secure_channels);
    g_free(cfg->token_keys);
    g_free(cfg->when_full);
    g_free(cfg->console_host);
    g_free(cfg->helper_path);
    g_free(cfg->helper_user);
    g_free(cfg->log_dir);
    g_free(cfg);
}

const char *qs_autostart_to_string(QsAutostart a)
{
    static const char *const names[] = { "none", "metadata", "list", "all" };

    return names[a];
}

gboolean qs_launch_config_wants_autostart(const QsLaunchConfig *cfg,
                                          const char *domain,
                                          gboolean metadata_opt_in)
{
    switch (cfg->autostart) {
    case QS_AUTOSTART_NONE:
        return FALSE;
    case QS_AUTOSTART_ALL:
        return TRUE;
    case QS_AUTOSTART_LIST:
        if (g_strv_contains((const char *const *)cfg->autostart_domains,
                            domain)) {
            return TRUE;
        }
        break;
    case QS_AUTOSTART_METADATA:
        break;
    }
    return metadata_opt_in;
}
