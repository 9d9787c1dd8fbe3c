/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SPICE images: the descriptor and per-type header around an encoder's bytes. */
#include "wire/qs-image-msg.h"
#include "wire/qs-wire.h"

#include <spice/enums.h>

/* SpiceImageDescriptor: u64 id; u8 type; u8 flags; u32 width; u32 height. */
static void put_descriptor(GByteArray *out, uint64_t id, uint8_t type,
                           uint32_t width, uint32_t height)
{
    qs_wire_u64(out, id);
    qs_wire_u8(out, type);
    qs_wire_u8(out, 0);         /* no CACHE_ME: we never use the pixmap cache */
    qs_wire_u32(out, width);
    qs_wire_u32(out, height);
}

size_t qs_image_bitmap_size(uint32_t width, uint32_t height)
{
    return QS_BITMAP_HEADER_SIZE + qs_enc_raw_size(width, height);
}

void qs_image_bitmap_append(const QsPixelRect *rect, uint64_t id, GByteArray *out)
{
    g_assert(qs_pixel_rect_valid(rect));
    put_descriptor(out, id, SPICE_IMAGE_TYPE_BITMAP, rect->width, rect->height);
    qs_wire_u8(out, SPICE_BITMAP_FMT_32BIT);
    qs_wire_u8(out, SPICE_BITMAP_FLAGS_TOP_DOWN);
    qs_wire_u32(out, rect->width);
    qs_wire_u32(out, rect->height);
    qs_wire_u32(out, rect->width * 4);  /* rows are packed on the wire */
    qs_wire_u32(out, 0);                /* palette pointer: none for 32BIT */
    qs_enc_raw_append(rect, out);
}

/* A compressed image: the descriptor, u32 data_size, the type's `extra`
 * header bytes, then what `encode` appends within the BITMAP image's size
 * (else it does not pay and `out` is left as it was). */
typedef gboolean (*EncodeFunc)(const QsPixelRect *rect, int quality, size_t limit,
                               GByteArray *out);

static gboolean append_compressed(const QsPixelRect *rect, uint64_t id, uint8_t type,
                                  const uint8_t *extra, guint n_extra, EncodeFunc encode,
                                  int quality, GByteArray *out)
{
    size_t limit = qs_image_bitmap_size(rect->width, rect->height);
    size_t start = out->len;
    size_t size_at;

    g_assert(qs_pixel_rect_valid(rect));
    put_descriptor(out, id, type, rect->width, rect->height);
    size_at = out->len;
    qs_wire_u32(out, 0);                /* data_size, patched below */
    g_byte_array_append(out, extra, n_extra);
    if (!encode(rect, quality, limit - (out->len - start), out)) {
        g_byte_array_set_size(out, (guint)start);
        return FALSE;
    }
    /* data_size counts everything after itself. */
    qs_wire_set_u32(out, size_at, (uint32_t)(out->len - size_at - 4));
    return TRUE;
}

static gboolean encode_lz4(const QsPixelRect *rect, int quality, size_t limit,
                           GByteArray *out)
{
    (void)quality;
    return qs_enc_lz4_append(rect, limit, out);
}

gboolean qs_image_lz4_append(const QsPixelRect *rect, uint64_t id, GByteArray *out)
{
    const uint8_t top_down_fmt[2] = { 1, SPICE_BITMAP_FMT_32BIT };

    return append_compressed(rect, id, SPICE_IMAGE_TYPE_LZ4, top_down_fmt,
                             sizeof(top_down_fmt), encode_lz4, 0, out);
}

static gboolean encode_lz(const QsPixelRect *rect, int quality, size_t limit,
                          GByteArray *out)
{
    (void)quality;
    return qs_enc_lz_append(rect, limit, out);
}

gboolean qs_image_lz_append(const QsPixelRect *rect, uint64_t id, GByteArray *out)
{
    /* SpiceLZRGBData is only data_size and the bytes: LZ's own header
     * (type, size, top_down) is part of the codec's stream. */
    return append_compressed(rect, id, SPICE_IMAGE_TYPE_LZ_RGB, NULL, 0, encode_lz, 0, out);
}

gboolean qs_image_jpeg_append(const QsPixelRect *rect, uint64_t id, int quality,
                              GByteArray *out)
{
    return append_compressed(rect, id, SPICE_IMAGE_TYPE_JPEG, NULL, 0,
                             qs_enc_jpeg_append, quality, out);
}

QsImageCodec qs_image_append(QsImageCodec codec, const QsPixelRect *rect,
                             uint64_t id, GByteArray *out)
{
    switch (codec) {
    case QS_IMAGE_CODEC_LZ4:
        if (qs_image_lz4_append(rect, id, out)) {
            return QS_IMAGE_CODEC_LZ4;
        }
        break;
    case QS_IMAGE_CODEC_LZ:
        if (qs_image_lz_append(rect, id, out)) {
            return QS_IMAGE_CODEC_LZ;
        }
        break;
    case QS_IMAGE_CODEC_JPEG:
        if (qs_image_jpeg_append(rect, id, QS_JPEG_QUALITY_DEFAULT, out)) {
            return QS_IMAGE_CODEC_JPEG;
        }
        break;
    case QS_IMAGE_CODEC_BITMAP:
        break;
    }
    qs_image_bitmap_append(rect, id, out);
    return QS_IMAGE_CODEC_BITMAP;
}
