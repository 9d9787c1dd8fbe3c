/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SPICE images: the descriptor and per-type header around an encoder's bytes. */
#include "wire/qs-image-msg.h"
#include "wire/qs-wire.h"

#include <spice/enums.h>
#include <string.h>

/* What each image type puts before its codec's bytes: the descriptor, then
 * BITMAP's header or data_size and the type's own fields. */
static const size_t image_header[QS_IMAGE_CODEC_COUNT] = {
    [QS_IMAGE_CODEC_BITMAP] = QS_BITMAP_HEADER_SIZE,
    [QS_IMAGE_CODEC_LZ4] = QS_LZ4_HEADER_SIZE,
    [QS_IMAGE_CODEC_JPEG] = QS_JPEG_HEADER_SIZE,
    [QS_IMAGE_CODEC_LZ] = QS_LZ_HEADER_SIZE - 28u,     /* LZ's own header is the codec's */
};

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

/* The image's header for `size` bytes of `codec`; data_size counts
 * everything after itself. */
static void put_header(QsImageCodec codec, const QsPixelRect *rect, uint64_t id,
                       size_t size, GByteArray *out)
{
    switch (codec) {
    case QS_IMAGE_CODEC_BITMAP:
        put_descriptor(out, id, SPICE_IMAGE_TYPE_BITMAP, rect->width, rect->height);
        qs_wire_u8(out, SPICE_BITMAP_FMT_32BIT);
        qs_wire_u8(out, SPICE_BITMAP_FLAGS_TOP_DOWN);
        qs_wire_u32(out, rect->width);
        qs_wire_u32(out, rect->height);
        qs_wire_u32(out, rect->width * 4);  /* rows are packed on the wire */
        qs_wire_u32(out, 0);                /* palette pointer: none for 32BIT */
        break;
    case QS_IMAGE_CODEC_LZ4:
        put_descriptor(out, id, SPICE_IMAGE_TYPE_LZ4, rect->width, rect->height);
        qs_wire_u32(out, (uint32_t)(2 + size));
        qs_wire_u8(out, 1);                 /* top down */
        qs_wire_u8(out, SPICE_BITMAP_FMT_32BIT);
        break;
    case QS_IMAGE_CODEC_JPEG:
        put_descriptor(out, id, SPICE_IMAGE_TYPE_JPEG, rect->width, rect->height);
        qs_wire_u32(out, (uint32_t)size);
        break;
    case QS_IMAGE_CODEC_LZ:
        /* SpiceLZRGBData is only data_size and the bytes: LZ's own header
         * (type, size, top_down) is part of the codec's stream. */
        put_descriptor(out, id, SPICE_IMAGE_TYPE_LZ_RGB, rect->width, rect->height);
        qs_wire_u32(out, (uint32_t)size);
        break;
    }
}

size_t qs_image_bitmap_size(uint32_t width, uint32_t height)
{
    return QS_BITMAP_HEADER_SIZE + qs_enc_raw_size(width, height);
}

void qs_image_bitmap_append(const QsPixelRect *rect, uint64_t id, GByteArray *out)
{
    g_assert(qs_pixel_rect_valid(rect));
    put_header(QS_IMAGE_CODEC_BITMAP, rect, id, 0, out);
    qs_enc_raw_append(rect, out);
}

/*
 * The codec's bytes are appended to `out` behind room for a header, and the
 * header of the codec used goes right in front of them afterwards: the
 * bytes move by the difference between headers at most, never to another
 * buffer (a raw image is megabytes, and a fresh buffer's pages cost).
 */
static void put_header_before(GByteArray *out, guint start, guint room,
                              QsImageCodec codec, const QsPixelRect *rect, uint64_t id)
{
    guint size = out->len - start - room;
    g_autoptr(GByteArray) header = g_byte_array_sized_new(QS_BITMAP_HEADER_SIZE);

    put_header(codec, rect, id, size, header);
    g_assert(header->len == image_header[codec] && header->len <= room);
    if (header->len < room) {
        memmove(out->data + start + header->len, out->data + start + room, size);
        g_byte_array_set_size(out, start + header->len + size);
    }
    memcpy(out->data + start, header->data, header->len);
}

/* One codec, no fallback: FALSE, `out` as it was, when it does not pay. */
static gboolean append_one(QsImageCodec codec, const QsPixelRect *rect, uint64_t id,
                           int quality, GByteArray *out)
{
    guint start = out->len;
    guint room = (guint)image_header[codec];

    g_byte_array_set_size(out, start + room);
    if (!qs_image_codec_try(codec, quality, image_header, rect, out)) {
        g_byte_array_set_size(out, start);
        return FALSE;
    }
    put_header_before(out, start, room, codec, rect, id);
    return TRUE;
}

gboolean qs_image_lz4_append(const QsPixelRect *rect, uint64_t id, GByteArray *out)
{
    return append_one(QS_IMAGE_CODEC_LZ4, rect, id, 0, out);
}

gboolean qs_image_lz_append(const QsPixelRect *rect, uint64_t id, GByteArray *out)
{
    return append_one(QS_IMAGE_CODEC_LZ, rect, id, 0, out);
}

gboolean qs_image_jpeg_append(const QsPixelRect *rect, uint64_t id, int quality,
                              GByteArray *out)
{
    return append_one(QS_IMAGE_CODEC_JPEG, rect, id, quality, out);
}

QsImageCodec qs_image_choose_append(gboolean lossy, int quality, QsImageCodec lossless,
                                    const QsPixelRect *rect, uint64_t id, GByteArray *out)
{
    const QsImageCodecChoice choice = { lossy, quality, lossless, image_header };
    guint start = out->len;
    QsImageCodec used;

    g_byte_array_set_size(out, start + QS_BITMAP_HEADER_SIZE);
    used = qs_image_codec_encode(&choice, rect, out);
    put_header_before(out, start, QS_BITMAP_HEADER_SIZE, used, rect, id);
    return used;
}

QsImageCodec qs_image_append(QsImageCodec codec, const QsPixelRect *rect,
                             uint64_t id, GByteArray *out)
{
    if (codec == QS_IMAGE_CODEC_JPEG) {
        return qs_image_choose_append(TRUE, QS_JPEG_QUALITY_DEFAULT, QS_IMAGE_CODEC_BITMAP,
                                      rect, id, out);
    }
    return qs_image_choose_append(FALSE, 0, codec, rect, id, out);
}
