/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The console as a URI, JSON, a remote-viewer .vv file, a Kerbside static
 * console entry or a link to the helper's console page. */
#pragma once

#include <glib.h>
#include "qs-launch-state.h"

typedef enum {
    QS_FORMAT_URI,
    QS_FORMAT_JSON,
    QS_FORMAT_VV,
    QS_FORMAT_KERBSIDE,
    QS_FORMAT_URL,          /* http(s)://HOST:PORT/#TOKEN: the console page */
} QsConsoleFormat;

typedef struct {
    const QsLaunchState *state;
    const char *password;      /* NULL: not readable by the caller */
    const char *ca_cert;       /* PEM text or NULL */
    const char *host_subject;  /* server certificate subject or NULL */
    const char *hypervisor;    /* host name (Kerbside 'hypervisor') */
    const char *hypervisor_ip; /* an address (Kerbside 'hypervisor_ip') */
    const char *hypervisor_ip_from;  /* where that address came from */
} QsConsoleInfo;

gboolean qs_console_format_parse(const char *name, QsConsoleFormat *out,
                                 GError **error);
char *qs_console_format(const QsConsoleInfo *info, QsConsoleFormat fmt,
                        GError **error);
