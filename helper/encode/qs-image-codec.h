/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The image codecs' table, and the one choice among them with its fallback. */
#pragma once

#include "encode/qs-encoder.h"

/* One image codec. `encode` appends its bytes for `rect` to `out`, or
 * returns FALSE, leaving `out` as it was, when they would take `limit`
 * bytes or more (BITMAP's never fails). `quality` is JPEG's. */
typedef struct {
    QsImageCodec id;
    const char *name;
    gboolean lossy;
    gboolean (*encode)(const QsPixelRect *rect, int quality, size_t limit,
                       GByteArray *out);
} QsImageCodecImpl;

#define QS_IMAGE_CODEC_COUNT 4u

const QsImageCodecImpl *qs_image_codec_get(QsImageCodec codec);
const char *qs_image_codec_name(QsImageCodec codec);

/*
 * Whether a codec pays depends on the framing around its bytes: `header`
 * (indexed by QsImageCodec) says how many bytes the caller's framing puts
 * before each codec's, BITMAP's the largest. A codec pays when its bytes
 * and header come to fewer than the raw rows and BITMAP's header.
 */

/* `codec`'s bytes for `rect` (valid) appended to `out` when they pay;
 * else FALSE, `out` as it was. */
gboolean qs_image_codec_try(QsImageCodec codec, int quality, const size_t *header,
                            const QsPixelRect *rect, GByteArray *out);

/* What one image may be encoded with: the plan's decision (lossy or not,
 * at what quality) and the client's lossless codec. */
typedef struct {
    gboolean lossy;             /* JPEG first */
    int quality;                /* JPEG's, 1..100 */
    QsImageCodec lossless;      /* then this, not lossy (LZ4, LZ or BITMAP) */
    const size_t *header;       /* the framing's, as for qs_image_codec_try */
} QsImageCodecChoice;

/* The one place an image's codec is chosen: JPEG when lossy and it pays,
 * else the lossless codec when it pays, else BITMAP. Appends that codec's
 * bytes to `out` and returns which. `rect` must be valid. */
QsImageCodec qs_image_codec_encode(const QsImageCodecChoice *choice,
                                   const QsPixelRect *rect, GByteArray *out);
