/* SPDX-License-Identifier: GPL-2.0-or-later */
/* TurboJPEG compression shared by the JPEG image encoder and the MJPEG video encoder (encode layer only). */
#pragma once

#include <glib.h>
#include <turbojpeg.h>

#include "encode/qs-encoder.h"

/* TJSAMP_* that qs_enc_jpeg_compress uses for `quality`. */
int qs_enc_jpeg_subsampling(int quality);

/* Appends one JFIF of `rect` (no SPICE framing); FALSE on failure, `out`
 * then unchanged. */
gboolean qs_enc_jpeg_compress(tjhandle tj, const QsPixelRect *rect, int quality,
                              GByteArray *out);
