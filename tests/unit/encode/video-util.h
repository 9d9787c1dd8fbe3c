/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Test content, H.264 bitstream inspection and external decoding shared by the video tests and the benchmark. */
#pragma once

#include <glib.h>
#include <stdint.h>

typedef enum {
    VT_BUSY,        /* gradient + 3 bits of noise + a moving box */
    VT_HEAVY,       /* 8 bits of noise in every channel */
} VtContent;

/* Draws frame `t` of `content` into a B,G,R,X buffer. */
void vt_draw(VtContent content, uint32_t t, uint8_t *buf, size_t stride,
             uint32_t w, uint32_t h, GRand *rand);

/* One NAL unit of an Annex-B buffer: the bytes after the start code. */
typedef struct {
    const uint8_t *p;
    size_t len;
    int type;       /* nal_unit_type */
} VtNal;

/* Splits an Annex-B buffer; returns the count (at most `max`). */
guint vt_nals(const uint8_t *data, size_t len, VtNal *nals, guint max);

/* slice_type (0..9) of a coded slice NAL (type 1 or 5); -1 if unreadable. */
int vt_slice_type(const VtNal *nal);

/* The SPS fields the tests check (H.264 7.3.2.1.1, E.1.1). */
typedef struct {
    int profile_idc, constraints, level_idc;
    int poc_type, max_num_ref_frames;
    int width, height;          /* in pixels, after cropping */
    int vui, video_full_range, colour_primaries, transfer, matrix;
    int bitstream_restriction, max_num_reorder_frames, max_dec_frame_buffering;
} VtSps;

/* Parses an SPS NAL (type 7); FALSE if it is cut short or uses a part this
 * parser does not know (HRD parameters, non-4:2:0). */
gboolean vt_parse_sps(const VtNal *nal, VtSps *sps);

/* Y-plane PSNR of two planes of `n` bytes. */
double vt_psnr(const uint8_t *a, const uint8_t *b, size_t n);

/* Is `element` a GStreamer element here (gst-inspect-1.0 --exists)? */
gboolean vt_gst_has(const char *element);

/* Decodes an Annex-B H.264 file with filesrc ! h264parse ! `decoder` !
 * videoconvert ! I420 filesink; returns the raw I420 frames or NULL. */
GBytes *vt_gst_decode_h264(const char *path, const char *decoder);
