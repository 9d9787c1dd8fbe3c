/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The image codecs' table, and the one choice among them with its fallback. */
#include "encode/qs-image-codec.h"

static gboolean encode_bitmap(const QsPixelRect *rect, int quality, size_t limit,
                              GByteArray *out)
{
    (void)quality;
    (void)limit;
    qs_enc_raw_append(rect, out);
    return TRUE;
}

static gboolean encode_lz4(const QsPixelRect *rect, int quality, size_t limit,
                           GByteArray *out)
{
    (void)quality;
    return qs_enc_lz4_append(rect, limit, out);
}

static gboolean encode_lz(const QsPixelRect *rect, int quality, size_t limit,
                          GByteArray *out)
{
    (void)quality;
    return qs_enc_lz_append(rect, limit, out);
}

static const QsImageCodecImpl codecs[QS_IMAGE_CODEC_COUNT] = {
    [QS_IMAGE_CODEC_BITMAP] = { QS_IMAGE_CODEC_BITMAP, "bitmap", FALSE, encode_bitmap },
    [QS_IMAGE_CODEC_LZ4] = { QS_IMAGE_CODEC_LZ4, "lz4", FALSE, encode_lz4 },
    [QS_IMAGE_CODEC_JPEG] = { QS_IMAGE_CODEC_JPEG, "jpeg", TRUE, qs_enc_jpeg_append },
    [QS_IMAGE_CODEC_LZ] = { QS_IMAGE_CODEC_LZ, "lz", FALSE, encode_lz },
};

const QsImageCodecImpl *qs_image_codec_get(QsImageCodec codec)
{
    g_assert((guint)codec < QS_IMAGE_CODEC_COUNT);
    return &codecs[codec];
}

const char *qs_image_codec_name(QsImageCodec codec)
{
    return (guint)codec < QS_IMAGE_CODEC_COUNT ? codecs[codec].name : "unknown";
}

gboolean qs_image_codec_try(QsImageCodec codec, int quality, const size_t *header,
                            const QsPixelRect *rect, GByteArray *out)
{
    /* BITMAP's header is the largest, so the limit never underflows. */
    size_t limit = header[QS_IMAGE_CODEC_BITMAP] + qs_enc_raw_size(rect->width, rect->height)
                   - header[codec];

    g_assert(qs_pixel_rect_valid(rect));
    g_assert(header[codec] <= header[QS_IMAGE_CODEC_BITMAP]);
    return qs_image_codec_get(codec)->encode(rect, quality, limit, out);
}

QsImageCodec qs_image_codec_encode(const QsImageCodecChoice *choice,
                                   const QsPixelRect *rect, GByteArray *out)
{
    g_assert(!qs_image_codec_get(choice->lossless)->lossy);
    if (choice->lossy &&
        qs_image_codec_try(QS_IMAGE_CODEC_JPEG, choice->quality, choice->header, rect, out)) {
        return QS_IMAGE_CODEC_JPEG;
    }
    if (choice->lossless != QS_IMAGE_CODEC_BITMAP &&
        qs_image_codec_try(choice->lossless, 0, choice->header, rect, out)) {
        return choice->lossless;
    }
    qs_image_codec_try(QS_IMAGE_CODEC_BITMAP, 0, choice->header, rect, out);
    return QS_IMAGE_CODEC_BITMAP;
}
