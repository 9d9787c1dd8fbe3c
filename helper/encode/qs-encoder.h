/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SPICE image encoders (lossless BITMAP/LZ4, lossy JPEG) for rectangles of 32-bit xRGB pixels. */
#pragma once

#include <glib.h>
#include <stdint.h>

/*
 * Each encoder appends one complete SPICE Image (ImageDescriptor followed by
 * the type's payload, spice-protocol.md §3.1) to `out`. Pixels are x8r8g8b8
 * in memory order B, G, R, X, i.e. SPICE_BITMAP_FMT_32BIT. The image is never
 * cached by the client (descriptor flags 0).
 */

typedef enum {
    QS_IMAGE_CODEC_BITMAP,      /* SPICE_IMAGE_TYPE_BITMAP, uncompressed */
    QS_IMAGE_CODEC_LZ4,         /* SPICE_IMAGE_TYPE_LZ4 (client cap LZ4_COMPRESSION) */
    QS_IMAGE_CODEC_JPEG,        /* SPICE_IMAGE_TYPE_JPEG, lossy, at QS_JPEG_QUALITY_DEFAULT */
} QsImageCodec;

typedef struct {
    const uint8_t *pixels;      /* first pixel of the rectangle */
    size_t stride;              /* bytes between rows, >= width * 4 */
    uint32_t width;
    uint32_t height;
} QsPixelRect;

/* Largest rectangle an encoder accepts; raw size stays far below 2 GiB. */
#define QS_ENCODE_MAX_SIDE 16384u
#define QS_ENCODE_MAX_PIXELS (16384u * 8192u)

#define QS_IMAGE_DESCRIPTOR_SIZE 18u
#define QS_BITMAP_HEADER_SIZE (QS_IMAGE_DESCRIPTOR_SIZE + 18u)
#define QS_LZ4_HEADER_SIZE (QS_IMAGE_DESCRIPTOR_SIZE + 4u + 2u)

/* Is `rect` something the encoders accept (non-empty, bounded, stride ok)? */
gboolean qs_pixel_rect_valid(const QsPixelRect *rect);

/* Exact size of the BITMAP image for `rect`. */
size_t qs_enc_bitmap_size(uint32_t width, uint32_t height);
void qs_enc_bitmap_append(const QsPixelRect *rect, uint64_t id, GByteArray *out);

/* Appends an LZ4 image. Returns FALSE, leaving `out` as it was, when the
 * compressed image would not be smaller than the BITMAP one (spice-server
 * then sends the bitmap too). */
gboolean qs_enc_lz4_append(const QsPixelRect *rect, uint64_t id, GByteArray *out);

/*
 * Appends a JPEG image (SPICE_IMAGE_TYPE_JPEG: u32 data_size, then one
 * baseline JFIF whose size equals the descriptor's, spice-protocol.md §3.3).
 * `quality` 1..100; from QS_JPEG_QUALITY_444 up chroma is kept at full
 * resolution (text and thin coloured lines), below it 4:2:0 like
 * spice-server. Returns FALSE, leaving `out` as it was, when TurboJPEG fails
 * or the JPEG would not be smaller than the BITMAP image.
 */
#define QS_JPEG_QUALITY_DEFAULT 80
#define QS_JPEG_QUALITY_444 90
#define QS_JPEG_HEADER_SIZE (QS_IMAGE_DESCRIPTOR_SIZE + 4u)
gboolean qs_enc_jpeg_append(const QsPixelRect *rect, uint64_t id, int quality,
                            GByteArray *out);

/* The one switch on codec: encodes with `codec`, falling back to BITMAP when
 * that does not pay; returns the codec actually used. The result is at most
 * qs_enc_bitmap_size() bytes. `rect` must be valid (qs_pixel_rect_valid). */
QsImageCodec qs_encode_image(QsImageCodec codec, const QsPixelRect *rect,
                             uint64_t id, GByteArray *out);

const char *qs_image_codec_name(QsImageCodec codec);
