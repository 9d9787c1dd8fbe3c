/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SPICE images: the descriptor and per-type header around an encoder's bytes. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "encode/qs-image-codec.h"

/*
 * Each function appends one complete SPICE Image (ImageDescriptor followed by
 * the type's payload, spice-protocol.md §3.1) to `out`. The image is never
 * cached by the client (descriptor flags 0).
 */

#define QS_IMAGE_DESCRIPTOR_SIZE 18u
#define QS_BITMAP_HEADER_SIZE (QS_IMAGE_DESCRIPTOR_SIZE + 18u)
#define QS_LZ4_HEADER_SIZE (QS_IMAGE_DESCRIPTOR_SIZE + 4u + 2u)
#define QS_JPEG_HEADER_SIZE (QS_IMAGE_DESCRIPTOR_SIZE + 4u)
#define QS_LZ_HEADER_SIZE (QS_IMAGE_DESCRIPTOR_SIZE + 4u + 28u)

/* Exact size of the SPICE_IMAGE_TYPE_BITMAP image for a rectangle. */
size_t qs_image_bitmap_size(uint32_t width, uint32_t height);
void qs_image_bitmap_append(const QsPixelRect *rect, uint64_t id, GByteArray *out);

/* SPICE_IMAGE_TYPE_LZ4. Returns FALSE, leaving `out` as it was, when the
 * image would not be smaller than the BITMAP one (spice-server then sends
 * the bitmap too). */
gboolean qs_image_lz4_append(const QsPixelRect *rect, uint64_t id, GByteArray *out);

/* SPICE_IMAGE_TYPE_LZ_RGB: u32 data_size, then SPICE's LZ stream of type
 * RGB32 (header and codes). Every client decodes it without a capability:
 * the lossless floor. FALSE, leaving `out` as it was, when the image would
 * not be smaller than the BITMAP one (a few pixels of noise: LZ's own
 * header is 28 bytes). */
gboolean qs_image_lz_append(const QsPixelRect *rect, uint64_t id, GByteArray *out);

/* SPICE_IMAGE_TYPE_JPEG: u32 data_size, then one baseline JFIF whose size
 * equals the descriptor's (spice-protocol.md §3.3). FALSE, leaving `out` as
 * it was, when TurboJPEG fails or the image would not be smaller than the
 * BITMAP one. */
gboolean qs_image_jpeg_append(const QsPixelRect *rect, uint64_t id, int quality,
                              GByteArray *out);

/* The image encode's codec table chooses (qs_image_codec_encode): JPEG at
 * `quality` when `lossy` and it pays, else `lossless` (not JPEG) when it
 * pays, else BITMAP; returns the codec used. At most qs_image_bitmap_size()
 * bytes. `rect` must be valid (qs_pixel_rect_valid). */
QsImageCodec qs_image_choose_append(gboolean lossy, int quality, QsImageCodec lossless,
                                    const QsPixelRect *rect, uint64_t id, GByteArray *out);
/* An image in `codec` (JPEG at QS_JPEG_QUALITY_DEFAULT), or BITMAP when that
 * does not pay; returns the codec used. */
QsImageCodec qs_image_append(QsImageCodec codec, const QsPixelRect *rect,
                             uint64_t id, GByteArray *out);
