/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A console link as a QR code in the terminal (qs-launch-qr.h). */

#include <errno.h>
#include <string.h>
#include <gio/gio.h>
#include <qrencode.h>
#include "qs-launch-qr.h"

#define QUIET 4

/* Is the module at (x, y) of the code with its quiet zone light? */
static gboolean light(const QRcode *qr, gint x, gint y)
{
    x -= QUIET;
    y -= QUIET;
    if (x < 0 || y < 0 || x >= qr->width || y >= qr->width) {
        return TRUE;
    }
    return !(qr->data[y * qr->width + x] & 1);
}

char *qs_qr_render(const char *text, gboolean colour, GError **error)
{
    static const char *const cell[4] = { " ", "\u2584", "\u2580", "\u2588" };
    QRcode *qr = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1);
    GString *out;
    gint size;

    if (!qr) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                    "no QR code for a link of %zu bytes: %s", strlen(text),
                    g_strerror(errno));
        return NULL;
    }
    size = qr->width + 2 * QUIET;
    out = g_string_new(NULL);
    for (gint y = 0; y < size; y += 2) {
        if (colour) {
            g_string_append(out, "\033[97;40m");
        }
        for (gint x = 0; x < size; x++) {
            guint top = light(qr, x, y), bottom = y + 1 < size ? light(qr, x, y + 1) : 0;

            g_string_append(out, cell[top << 1 | bottom]);
        }
        g_string_append(out, colour ? "\033[0m\n" : "\n");
    }
    QRcode_free(qr);
    return g_string_free(out, FALSE);
}
