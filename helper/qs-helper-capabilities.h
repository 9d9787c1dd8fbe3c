/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --print-capabilities: what this helper supports, for a management layer. */
#pragma once

#include <glib.h>

/* Prints one JSON object, {"type", "version", "features"}, on stdout;
 * FALSE if it could not be written. */
gboolean qs_helper_print_capabilities(void);
