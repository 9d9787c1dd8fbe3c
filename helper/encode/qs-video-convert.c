/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What QsVideoEncoder and its backends share, below them all: the error
 * domain and the BGRX -> I420 conversion the H.264 backend uses. */
#include "encode/qs-video.h"

#include <libyuv/convert_from_argb.h>

G_DEFINE_QUARK(qs-video-error-quark, qs_video_error)

/*
 * BT.601 full range (Y, Cb, Cr 0..255, JFIF's colour space, as the MJPEG
 * frames have), which libyuv calls J420; its "ARGB" is B,G,R,A in memory,
 * qemu's x8r8g8b8 on little-endian hosts. Full range and not studio swing:
 * GStreamer 1.22's videoconvert, which turns spice-gtk's decoded H.264 into
 * BGRx, darkens studio-swing pictures by 1.5-4 levels per channel
 * (measured: a busy test frame converted exactly and shown through it
 * scored 37.2 dB against the original, 40.5 dB with full range), the
 * largest part of what our streams lost against spice-server's MJPEG
 * (docs/performance.md).
 *
 * libyuv picks SSSE3/AVX2/AVX-512 rows at run time: 0.42 M instructions a
 * 640x480 frame against 3.2 M for the SSE2 code it replaced, whose luma it
 * matches exactly; its chroma averages each 2x2 block with rounding before
 * the matrix, so a quarter of U and V samples differ from the exact sum by
 * one step (tests/unit/encode/test-video.c bounds it).
 */
void qs_video_bgrx_to_i420(const uint8_t *pixels, size_t stride, uint32_t width,
                           uint32_t height, uint8_t *y, size_t y_stride,
                           uint8_t *u, uint8_t *v, size_t uv_stride)
{
    g_return_if_fail(width <= G_MAXINT && height <= G_MAXINT && stride <= G_MAXINT &&
                     y_stride <= G_MAXINT && uv_stride <= G_MAXINT);
    ARGBToJ420(pixels, (int)stride, y, (int)y_stride, u, (int)uv_stride, v,
               (int)uv_stride, (int)width, (int)height);
}
