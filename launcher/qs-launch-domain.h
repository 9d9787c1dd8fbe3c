/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a libvirt domain XML says about attaching: the D-Bus display mode and
 * our metadata element. */
#pragma once

#include <glib.h>

#define QS_METADATA_URI "https://qemu-spice.org/xmlns/console/1"
#define QS_METADATA_PREFIX "qemu-spice"

typedef enum {
    QS_DISPLAY_P2P,   /* <graphics type='dbus' p2p='yes'/>: virDomainOpenGraphicsFD */
    QS_DISPLAY_BUS,   /* <graphics type='dbus' address='unix:path=...'/> */
} QsDisplayMode;

/* A <channel type='unix'> with a virtio target: a virtio-serial port whose
 * chardev is a unix socket. */
typedef struct {
    char *name;              /* <target name=...> */
    char *path;              /* <source path=...> */
    gboolean qemu_listens;   /* <source mode='bind'>: qemu is the server */
} QsDomainPort;

typedef struct {
    char *name;
    char *uuid;
    int id;                  /* -1 when the XML is of an inactive domain */
    QsDisplayMode mode;
    guint graphics_index;    /* index among <graphics> for OpenGraphicsFD */
    char *bus_address;       /* QS_DISPLAY_BUS: the D-Bus address */
    char *bus_path;          /* QS_DISPLAY_BUS: its unix socket path */
    gboolean autostart;      /* our metadata element says autostart='yes' */
    GPtrArray *ports;        /* QsDomainPort, in document order */
    /* <redirdev bus='usb' type='unix'>: QsDomainPort named "usbredir.N"
     * (N counting these), in document order. */
    GPtrArray *redirdevs;
    /* The first <smartcard mode='passthrough' type='unix'>: QsDomainPort
     * named "smartcard", or NULL; extra_smartcards counts the others (the
     * helper offers one reader). */
    QsDomainPort *smartcard;
    guint extra_smartcards;
    /* The user and group qemu runs as, from the live XML's
     * <seclabel model='dac'><label>+UID:+GID</label>; -1: not said. */
    gint64 qemu_uid, qemu_gid;
} QsDomainInfo;

/* Parses the XML. Fails, saying what XML the domain needs, when there is no
 * usable <graphics type='dbus'>. */
QsDomainInfo *qs_domain_info_parse(const char *xml, GError **error);
/* Only the opt-in (for the hook, which gets an XML that may lack a display). */
gboolean qs_domain_xml_opts_in(const char *xml, char **name, GError **error);
/* Only the domain's <uuid> (the hook's unit instance), or NULL. */
char *qs_domain_xml_uuid(const char *xml);
void qs_domain_info_free(QsDomainInfo *info);

/* Whether the launcher passes PORT to the helper; if not, *why says why
 * (libvirt's own guest-agent channel, a socket qemu connects out to). The
 * SPICE agent's port com.redhat.spice.0 goes as --agent-fd, the others as
 * --port-fd. */
gboolean qs_domain_port_usable(const QsDomainPort *port, const char **why);
/* Whether the launcher listens on REDIRDEV's socket for the helper; if
 * not, *why says why (qemu listens on it itself). */
gboolean qs_domain_redirdev_usable(const QsDomainPort *redirdev, const char **why);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsDomainInfo, qs_domain_info_free)

typedef struct {
    gboolean autostart;
    const char *host;
    guint port;              /* 0: none */
    guint tls_port;          /* 0: none */
    const char *ticket_file;
    gint64 ticket_expiry;    /* unix seconds, 0: never */
    int pid;
    guint restarts;
    gint64 started;
} QsConsoleMeta;

/* The <console> element for virDomainSetMetadata (namespace added by libvirt). */
char *qs_console_metadata_xml(const QsConsoleMeta *meta);
