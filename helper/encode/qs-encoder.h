/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Image codecs (raw rows, SPICE LZ, LZ4, JPEG) for rectangles of 32-bit xRGB pixels. */
#pragma once

#include <glib.h>
#include <stdint.h>

/*
 * Each codec appends its compressed bytes to `out`, nothing more: the SPICE
 * image around them (descriptor, per-type header) is wire's framing
 * (wire/qs-image-msg.h), and which codec an image gets, falling back when
 * one does not pay, is qs-image-codec.h's. Pixels are x8r8g8b8 in memory
 * order B, G, R, X, i.e. SPICE_BITMAP_FMT_32BIT.
 */

typedef enum {
    QS_IMAGE_CODEC_BITMAP,      /* uncompressed rows */
    QS_IMAGE_CODEC_LZ4,         /* LZ4 blocks (client cap LZ4_COMPRESSION) */
    QS_IMAGE_CODEC_JPEG,        /* lossy, at QS_JPEG_QUALITY_DEFAULT */
    QS_IMAGE_CODEC_LZ,          /* SPICE LZ_RGB32: lossless for every client */
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

/* Is `rect` something the encoders accept (non-empty, bounded, stride ok)? */
gboolean qs_pixel_rect_valid(const QsPixelRect *rect);

/* The rows packed (width * 4 bytes each, top down): qs_enc_raw_size() bytes. */
size_t qs_enc_raw_size(uint32_t width, uint32_t height);
void qs_enc_raw_append(const QsPixelRect *rect, GByteArray *out);

/* Appends LZ4 blocks, each {u32 big-endian length; block} over whole rows.
 * Returns FALSE, leaving `out` as it was, when they would take `limit` bytes
 * or more (the caller's uncompressed alternative: it does not pay). */
gboolean qs_enc_lz4_append(const QsPixelRect *rect, size_t limit, GByteArray *out);

/* Appends SPICE's LZ stream of type RGB32 (its own 28-byte header, then the
 * codes; qs-enc-lz.c). Returns FALSE, leaving `out` as it was, when it would
 * take `limit` bytes or more. It never takes more than qs_enc_lz_bound(),
 * which is below the raw size from 30 pixels on. */
size_t qs_enc_lz_bound(uint32_t width, uint32_t height);
gboolean qs_enc_lz_append(const QsPixelRect *rect, size_t limit, GByteArray *out);

/*
 * Appends one baseline JFIF at `quality` 1..100; from QS_JPEG_QUALITY_444 up
 * chroma is kept at full resolution (text and thin coloured lines), below it
 * 4:2:0 like spice-server. Returns FALSE, leaving `out` as it was, when
 * TurboJPEG fails or the JFIF would take `limit` bytes or more.
 */
#define QS_JPEG_QUALITY_DEFAULT 80
#define QS_JPEG_QUALITY_444 90
gboolean qs_enc_jpeg_append(const QsPixelRect *rect, int quality, size_t limit,
                            GByteArray *out);
