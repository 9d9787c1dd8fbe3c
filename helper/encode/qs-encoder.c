/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Picks the image encoder for a rectangle: the only switch on codec type. */
#include "encode/qs-encoder.h"

QsImageCodec qs_encode_image(QsImageCodec codec, const QsPixelRect *rect,
                             uint64_t id, GByteArray *out)
{
    switch (codec) {
    case QS_IMAGE_CODEC_LZ4:
        if (qs_enc_lz4_append(rect, id, out)) {
            return QS_IMAGE_CODEC_LZ4;
        }
        break;
    case QS_IMAGE_CODEC_JPEG:
        if (qs_enc_jpeg_append(rect, id, QS_JPEG_QUALITY_DEFAULT, out)) {
            return QS_IMAGE_CODEC_JPEG;
        }
        break;
    case QS_IMAGE_CODEC_BITMAP:
        break;
    }
    qs_enc_bitmap_append(rect, id, out);
    return QS_IMAGE_CODEC_BITMAP;
}

const char *qs_image_codec_name(QsImageCodec codec)
{
    switch (codec) {
    case QS_IMAGE_CODEC_BITMAP:
        return "bitmap";
    case QS_IMAGE_CODEC_LZ4:
        return "lz4";
    case QS_IMAGE_CODEC_JPEG:
        return "jpeg";
    }
    return "unknown";
}
