/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The server certificate's subject, as a viewer checks it (host-subject). */
#pragma once

#include <glib.h>

/* The subject of the PEM certificate at `path` in the form spice-gtk's
 * host-subject takes ("C=XX,O=Example,CN=hv1"): the relative distinguished
 * names in the certificate's order, each attribute=value with ',', '+',
 * '\' and the like escaped by a '\'. A subject with a multi-valued RDN,
 * which that form cannot say, is an error. */
char *qs_cert_subject(const char *path, GError **error);
