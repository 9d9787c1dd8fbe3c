/* SPDX-License-Identifier: GPL-2.0-or-later */
/* JPEG: one baseline JFIF of a 32-bit xRGB rectangle, compressed by TurboJPEG. */
#include "encode/qs-encoder.h"
#include "encode/qs-enc-jpeg.h"

#include <turbojpeg.h>

/*
 * spice-gtk decodes the payload with libjpeg into JCS_RGB and asserts that
 * the JPEG's size equals the descriptor's (canvas_get_jpeg), so any sampling
 * libjpeg reads is fine. TurboJPEG reads our B,G,R,X memory order directly
 * (TJPF_BGRX) and honours the stride, so no conversion pass is needed.
 */

int qs_enc_jpeg_subsampling(int quality)
{
    return quality >= (int)QS_JPEG_QUALITY_444 ? TJSAMP_444 : TJSAMP_420;
}

gboolean qs_enc_jpeg_compress(tjhandle tj, const QsPixelRect *rect, int quality,
                              GByteArray *out)
{
    unsigned char *jpeg = NULL;
    unsigned long jpeg_size = 0;
    int rc;

    rc = tjCompress2(tj, rect->pixels, (int)rect->width, (int)rect->stride,
                     (int)rect->height, TJPF_BGRX, &jpeg, &jpeg_size,
                     qs_enc_jpeg_subsampling(quality), CLAMP(quality, 1, 100),
                     TJFLAG_FASTDCT);
    if (rc != 0 || jpeg_size == 0 || jpeg_size > G_MAXUINT32 - out->len) {
        tjFree(jpeg);
        return FALSE;
    }
    g_byte_array_append(out, jpeg, (guint)jpeg_size);
    tjFree(jpeg);
    return TRUE;
}

gboolean qs_enc_jpeg_append(const QsPixelRect *rect, int quality, size_t limit,
                            GByteArray *out)
{
    size_t start = out->len;
    tjhandle tj;
    gboolean ok;

    g_assert(qs_pixel_rect_valid(rect));
    tj = tjInitCompress();
    if (!tj) {
        return FALSE;
    }
    ok = qs_enc_jpeg_compress(tj, rect, quality, out);
    tjDestroy(tj);
    if (ok && out->len - start >= limit) {
        g_byte_array_set_size(out, (guint)start);
        ok = FALSE;
    }
    return ok;
}
