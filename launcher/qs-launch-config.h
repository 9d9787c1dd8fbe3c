/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The launcher's configuration file (qemu-spice.conf(5)) and its validation. */
#pragma once

#include <sys/types.h>
#include <glib.h>

#ifndef QS_LAUNCH_DEFAULT_CONFIG  /* set by meson from sysconfdir */
#define QS_LAUNCH_DEFAULT_CONFIG "/etc/qemu-spice/qemu-spice.conf"
#endif

typedef enum {
    QS_AUTOSTART_NONE,      /* the hook never starts a helper */
    QS_AUTOSTART_METADATA,  /* domains carrying <qemu-spice:console autostart='yes'/> */
    QS_AUTOSTART_LIST,      /* metadata opt-in, or named in autostart-domains */
    QS_AUTOSTART_ALL,       /* every domain with a D-Bus display */
} QsAutostart;

typedef struct {
    char *path;              /* the file read, NULL when only defaults apply */
    /* [launcher] */
    char *uri;
    char *run_dir;
    QsAutostart autostart;
    char **autostart_domains;
    gboolean supervise;
    guint backoff_max_s;
    guint wait_s;            /* how long a hook-started launcher waits for libvirt */
    char *qemu_conf;         /* libvirt's qemu.conf, for SPICE defaults */
    /* [listen] */
    char *listen_address;
    const char *listen_from; /* where the address came from (static text) */
    guint port_min;
    guint port_max;
    gboolean plain;
    gboolean tls;
    char *tls_dir;           /* [listen] tls-dir, else libvirt's SPICE one */
    gboolean tls_dir_set;    /* tls-dir came from the file */
    char *secure_channels;
    char *console_host;      /* [listen] host: the name reported to clients */
    char *public_address;    /* for a wildcard listener: the address reported */
    gboolean proxy_only;     /* no ticket: only a proxy reaches the address */
    /* [ticket] */
    guint ticket_lifetime_s; /* 0: never expires */
    char *token_keys;        /* master key file for signed tokens, or NULL */
    /* [helper] */
    char *helper_path;
    char *helper_user;
    uid_t helper_uid;
    gid_t helper_gid;
    char *log_dir;
    guint max_fps;              /* the helper's --max-fps */
    gboolean console_page;      /* FALSE: the helper's --no-console-page */
    /* [sessions]: the helper's --max-sessions and --when-full */
    guint max_sessions;
    char *when_full;
} QsLaunchConfig;

/* Loads PATH (or the default file, which may be absent) over the defaults.
 * Every error names the file and the [group] key. */
QsLaunchConfig *qs_launch_config_load(const char *path, GError **error);
QsLaunchConfig *qs_launch_config_load_data(const char *data, const char *name,
                                           GError **error);
void qs_launch_config_free(QsLaunchConfig *cfg);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsLaunchConfig, qs_launch_config_free)

/* Where libvirt keeps the SPICE certificates of its own <graphics
 * type='spice'> (qemu.conf: spice_tls_x509_cert_dir, falling back to
 * default_tls_x509_cert_dir), the first of which exists. */
extern const char *const qs_libvirt_spice_tls_dirs[];
/* The first directory of CANDIDATES that exists, else the first. */
char *qs_launch_config_default_tls_dir(const char *const *candidates);
/* The default [helper] user: the first of these that exists. */
extern const char *const qs_helper_users[];
char *qs_launch_config_default_user(const char *const *candidates);

gboolean qs_launch_config_wants_autostart(const QsLaunchConfig *cfg,
                                          const char *domain,
                                          gboolean metadata_opt_in);
const char *qs_autostart_to_string(QsAutostart a);
