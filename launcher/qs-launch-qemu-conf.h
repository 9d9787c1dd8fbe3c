/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What libvirt's qemu.conf says about SPICE: the defaults the launcher takes
 * when qemu-spice.conf does not say (qemu-spice.conf(5), [listen]). */
#pragma once

#include <glib.h>

#define QS_QEMU_CONF_DEFAULT "/etc/libvirt/qemu.conf"
#define QS_QEMU_CONF_MAX (1024 * 1024)

typedef struct {
    char *spice_listen;          /* spice_listen, or NULL */
    gint spice_tls;              /* spice_tls: 0 or 1, -1 unset */
    char *spice_tls_dir;         /* spice_tls_x509_cert_dir, or NULL */
    char *default_tls_dir;       /* default_tls_x509_cert_dir, or NULL */
} QsQemuConf;

void qs_qemu_conf_clear(QsQemuConf *qc);

/*
 * Parses libvirt's configuration syntax (src/util/virconf.c's, as libvirt
 * reads qemu.conf): statements NAME = VALUE ended by a line end or ';',
 * '#' comments, values a number, a string in "..." or '...' (one line, no
 * escapes) or """...""" (several lines), or a [list, of, values]. The first
 * statement of a name counts, as in libvirt. Keys other than the four
 * above are checked for syntax only. An error names `name`, the line and
 * the problem, and any key above with a value of the wrong type.
 */
gboolean qs_qemu_conf_parse(const char *text, gsize len, const char *name, QsQemuConf *qc,
                            GError **error);
/* The file at `path`; a file that does not exist is all unset. */
gboolean qs_qemu_conf_load(const char *path, QsQemuConf *qc, GError **error);
