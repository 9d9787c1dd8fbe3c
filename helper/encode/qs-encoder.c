/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Names of the image codecs, for log lines and statistics. */
#include "encode/qs-encoder.h"

const char *qs_image_codec_name(QsImageCodec codec)
{
    switch (codec) {
    case QS_IMAGE_CODEC_BITMAP:
        return "bitmap";
    case QS_IMAGE_CODEC_LZ4:
        return "lz4";
    case QS_IMAGE_CODEC_JPEG:
        return "jpeg";
    case QS_IMAGE_CODEC_LZ:
        return "lz";
    }
    return "unknown";
}
