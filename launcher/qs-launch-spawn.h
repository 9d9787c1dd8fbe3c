/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Listening sockets, the ticket and the helper's process: everything that
 * needs the launcher's rights, done before the helper exists. */
#pragma once

#include <sys/types.h>
#include <glib.h>

/* Binds ADDR on the first free port of [min, max] (CLOEXEC, listening).
 * A port in use or refused (EACCES) is skipped; any other failure stops. */
int qs_bind_listener(const char *addr, guint min, guint max, guint *port,
                     GError **error);

/* 24 random bytes, base64: 32 characters, far inside the 60-byte limit. */
char *qs_ticket_generate(GError **error);
/* Reads a ticket source file (first line = password) like the helper does. */
char *qs_ticket_read_file(const char *path, gint64 *expiry, GError **error);
/* Writes PASSWORD and its expiry line, mode 0600. */
gboolean qs_ticket_write_file(const char *path, const char *password,
                              gint64 expiry, GError **error);

/* Checks DIR holds readable server-cert.pem and server-key.pem, and copies
 * them (and ca-cert.pem if present) into PRIVATE_DIR owned by uid/gid. */
gboolean qs_tls_prepare(const char *dir, const char *private_dir, uid_t uid,
                        gid_t gid, GError **error);

/* The guest agent's virtio-serial port: passed as --agent-fd. */
#define QS_AGENT_PORT_NAME "com.redhat.spice.0"

/* At most as many ports and usb-redir devices as the helper takes. */
#define QS_SPAWN_MAX_PORTS 16
#define QS_SPAWN_MAX_USBREDIR 8
#define QS_SPAWN_MAX_CHARDEVS (QS_SPAWN_MAX_PORTS + QS_SPAWN_MAX_USBREDIR + 1)

typedef struct {
    const char *name;          /* the virtio-serial port's name, "usbredir.N" or "smartcard" */
    int fd;                    /* connected to its chardev, or listening for qemu */
    gboolean usbredir;         /* --usbredir-fd rather than --port-fd */
    gboolean smartcard;        /* --smartcard-fd rather than --port-fd */
} QsSpawnPort;

typedef struct {
    const char *helper_path;
    int display_fd;            /* p2p socket, or -1 */
    const char *bus_address;   /* bus mode, or NULL */
    const char *vm;            /* bus mode: --vm */
    int listen_fd;             /* or -1 */
    int tls_listen_fd;         /* or -1 */
    int control_fd;            /* listening control socket, or -1 */
    const char *tls_dir;
    const char *token_keys_file; /* --token-keys-file, or NULL */
    const char *view_ticket_file; /* --view-ticket-file, or NULL */
    const char *secure_channels;
    guint max_sessions;
    const char *when_full;
    guint max_fps;
    gboolean no_console_page;   /* --no-console-page */
    const char *password;      /* NULL: proxy-only, no credential */
    gint64 ticket_expiry;      /* 0: never */
    uid_t uid;
    gid_t gid;
    int log_fd;
    const QsSpawnPort *ports;  /* --port-fd, --usbredir-fd, --smartcard-fd, at most
                                * QS_SPAWN_MAX_CHARDEVS */
    guint n_ports;
} QsSpawnSpec;

/* Starts the helper with exactly these descriptors (3 display, 4 plain
 * listener, 5 TLS listener, 6 ticket pipe, 7 control socket, 9... the
 * ports and usb-redir sockets) and nothing else open. */
pid_t qs_spawn_helper(const QsSpawnSpec *spec, GError **error);
