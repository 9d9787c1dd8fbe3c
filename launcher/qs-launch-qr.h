/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A QR code of a console link, for a terminal (console --qr). */
#pragma once

#include <glib.h>

/* `text` as a QR code (libqrencode, error correction level M) in text:
 * two modules a character (the half blocks ▀ ▄ █ and a space), a quiet
 * zone of four modules. Light modules are the printed ones, as a terminal
 * with a dark background shows them; with `colour`, ANSI colours make the
 * code white on black on any background. */
char *qs_qr_render(const char *text, gboolean colour, GError **error);
