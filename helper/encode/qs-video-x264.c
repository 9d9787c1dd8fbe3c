/* SPDX-License-Identifier: GPL-2.0-or-later */
/* H.264 video backend on libx264: low-latency constrained baseline Annex-B for spice-gtk's decoders. */
#include "encode/qs-video.h"
#include "encode/qs-video-private.h"

#include <string.h>
#include <x264.h>

/*
 * Why these settings:
 * - preset ultrafast, tune zerolatency: no lookahead, no frame threads, no
 *   B-frames, so each encode() returns its own frame. Measured here for
 *   640x480 gradient + noise, conversion included: 2.2-4.8 ms of CPU per
 *   frame at 2-10 Mbit/s (test-video-live -m perf), a tenth of a 30 fps
 *   frame interval.
 * - profile baseline (x264 marks it constrained: constraint_set0/1), so
 *   avdec_h264 and openh264dec, which spice-gtk's playbin picks from, both
 *   decode it; no CABAC costs ~10 % bits, which we accept.
 * - one thread, no sliced threads: the cost stays on one core and is
 *   measurable; the helper runs one encoder per client stream.
 * - rate control by quality (CRF at enc->quality) when one is given, else
 *   ABR at the bit rate; in both a VBV of QS_X264_VBV_MS at the bit rate
 *   (the link's share): it bounds any one frame's size, so a frame never
 *   occupies the link for longer than that, and x264_encoder_reconfig() may
 *   change the ceiling later (x264 only allows that when VBV was on from the
 *   start). Under CRF a smooth or still picture costs what it needs, a few
 *   kbit/s, and only noise reaches the ceiling.
 * - the stream encodes only frames qemu changed, so frames come at qemu's
 *   rate, not at the nominal fps. x264's own variable frame rate input
 *   (b_vfr_input) would follow that, but it holds every frame back until
 *   the next one arrives (measured: the first encode returns nothing), so
 *   the input stays constant-rate and the rate given to x264 is scaled by
 *   qemu's average frame interval over the nominal one instead (1x..4x): the
 *   VBV then refills per frame what the ceiling gives over qemu's
 *   interval. It is retuned on a 20 % change, like the ceiling. The
 *   interval is the source's (qs_video_encoder_set_source_interval), not
 *   the time between our encodes: scaled by the latter, an encoder that
 *   fell behind (measured: a sanitizer build on heavy noise) made bigger
 *   frames, which took longer still, down to 5 frames in 3 s.
 * - a flush (below) is a frame to x264's rate control too: its VBV refills
 *   for it, and the flush at QP 51 spends almost nothing, so the next real
 *   frame may spend both refills. When every frame is followed by a flush
 *   (a stream at a lowered frame rate, flow/qs-rate.h) frames came out at
 *   twice the ceiling's size (measured: 35 KB frames under an 18 KB ceiling
 *   at 80 ms / 10 Mbit). So the rate given to x264 is divided by the x264
 *   inputs per real frame over the last QS_X264_FLUSH_WINDOW frames: 1x
 *   without flushes, 1/2 when each frame has its flush. A single flush at
 *   the end of a motion costs the next few frames a fifth of the rate at
 *   most, until it leaves the window.
 * - no periodic keyframe and no intra refresh (spice-server's intra-refresh
 *   leaves a late-joining openh264 without parameter sets): the caller asks
 *   for an IDR at STREAM_CREATE and when a decoder needs one; SPS/PPS are
 *   repeated before each IDR.
 * - AUD on, as spice-server's x264enc does, so each STREAM_DATA holds
 *   exactly one delimited access unit.
 * - VUI: BT.601 full range, matching qs_video_bgrx_to_i420(); without it
 *   GStreamer guesses BT.709 for larger frames and colours shift, and
 *   studio swing lost 3 dB in its conversion (qs-video.c).
 * - Two changes to ultrafast, each measured on the busy guest at 80 ms /
 *   10 Mbit (the frozen frame's PSNR over R, G, B; docs/performance.md):
 *   the deblocking filter back on (+0.5 dB, no more bytes; about 10 % more
 *   encoder CPU in the unit benchmark, 1.08 -> 1.19 ms a 640x480 frame) and
 *   chroma quantised 4 steps finer than luma (+0.5 dB for 14 % more bytes).
 *   After both, spice-gtk's own conversion to RGB is the larger loss left;
 *   CRF 23-24 or a finer chroma offset moved the first still by under
 *   0.1 dB for 10-80 % more bytes.
 */

#define QS_X264_VBV_MS 300u
#define QS_X264_FLUSH_WINDOW 4u

typedef struct {
    x264_t *x264;
    x264_param_t param;
    x264_picture_t pic;
    uint32_t applied_bps;       /* the bit rate x264 was given, scaled */
    gboolean flushed;           /* a flush went since the last real frame */
    guint flush_bits;           /* the last QS_X264_FLUSH_WINDOW frames: bit set when
                                 * a flush went before it */
} QsX264;

/* The bit rate per x264 input that the ceiling gives over the source's
 * frame interval, shared with the flushes between frames. */
static uint32_t scaled_bitrate(const QsVideoEncoder *enc, const QsX264 *x,
                               int64_t interval_us)
{
    int64_t nominal = G_USEC_PER_SEC / enc->fps;
    int64_t dt = CLAMP(interval_us, nominal, 4 * nominal);
    uint64_t inputs = QS_X264_FLUSH_WINDOW + (uint64_t)__builtin_popcount(x->flush_bits);

    return (uint32_t)MIN((uint64_t)enc->bitrate * (uint64_t)dt * QS_X264_FLUSH_WINDOW /
                         ((uint64_t)nominal * inputs),
                         QS_VIDEO_MAX_BITRATE);
}

static void set_rate(x264_param_t *p, uint32_t bitrate, uint32_t fps)
{
    int kbps = (int)MAX(1u, bitrate / 1000u);
    int frame_kbit = (int)MAX(1u, bitrate / 1000u / fps);

    p->rc.i_bitrate = kbps;
    p->rc.i_vbv_max_bitrate = kbps;
    /* At least two frames' worth, so a keyframe is not starved. */
    p->rc.i_vbv_buffer_size = MAX(2 * frame_kbit, (int)(kbps * QS_X264_VBV_MS / 1000));
}

static gboolean x264_init(QsVideoEncoder *enc, GError **error)
{
    QsX264 *x = g_new0(QsX264, 1);
    x264_param_t *p = &x->param;

    if (x264_param_default_preset(p, "ultrafast", "zerolatency") < 0) {
        g_free(x);
        g_set_error(error, QS_VIDEO_ERROR, QS_VIDEO_ERROR_FAILED,
                    "x264 rejected its own preset");
        return FALSE;
    }
    p->i_csp = X264_CSP_I420;
    p->i_width = (int)enc->width;
    p->i_height = (int)enc->height;
    p->i_fps_num = enc->fps;
    p->i_fps_den = 1;
    p->b_vfr_input = 0;
    p->i_timebase_num = 1;
    p->i_timebase_den = enc->fps;
    p->i_threads = 1;
    p->b_sliced_threads = 0;
    p->i_bframe = 0;
    p->i_keyint_max = X264_KEYINT_MAX_INFINITE;
    p->b_intra_refresh = 0;
    p->b_repeat_headers = 1;
    p->b_annexb = 1;
    p->b_aud = 1;
    p->i_log_level = X264_LOG_NONE;
    p->b_deblocking_filter = 1;
    p->analyse.i_chroma_qp_offset = -4;
    p->vui.i_colorprim = 6;     /* SMPTE 170M, i.e. BT.601 525 */
    p->vui.i_transfer = 6;
    p->vui.i_colmatrix = 6;
    p->vui.b_fullrange = 1;
    if (enc->quality > 0) {
        p->rc.i_rc_method = X264_RC_CRF;
        p->rc.f_rf_constant = (float)enc->quality;
    } else {
        p->rc.i_rc_method = X264_RC_ABR;
    }
    set_rate(p, enc->bitrate, enc->fps);
    x->applied_bps = enc->bitrate;
    if (x264_param_apply_profile(p, "baseline") < 0) {
        g_free(x);
        g_set_error(error, QS_VIDEO_ERROR, QS_VIDEO_ERROR_FAILED,
                    "x264 cannot apply the baseline profile");
        return FALSE;
    }

    x->x264 = x264_encoder_open(p);
    if (!x->x264) {
        g_free(x);
        g_set_error(error, QS_VIDEO_ERROR, QS_VIDEO_ERROR_FAILED,
                    "x264 cannot open a %ux%u encoder", enc->width, enc->height);
        return FALSE;
    }
    if (x264_picture_alloc(&x->pic, X264_CSP_I420, p->i_width, p->i_height) < 0) {
        x264_encoder_close(x->x264);
        g_free(x);
        g_set_error(error, QS_VIDEO_ERROR, QS_VIDEO_ERROR_FAILED,
                    "out of memory for an x264 picture");
        return FALSE;
    }
    enc->priv = x;
    return TRUE;
}

/* Encodes the I420 picture in x->pic (x264 does not modify it); `qp` 0
 * leaves the quantiser to rate control. */
static gboolean encode_pic(QsVideoEncoder *enc, gboolean force_keyframe, int qp,
                           QsVideoFrame *frame, GError **error)
{
    QsX264 *x = enc->priv;
    x264_picture_t out_pic;
    x264_nal_t *nals = NULL;
    int n_nals = 0;
    int size;

    x->pic.i_pts = (int64_t)enc->frames;
    x->pic.i_type = force_keyframe ? X264_TYPE_IDR : X264_TYPE_AUTO;
    x->pic.i_qpplus1 = qp ? qp + 1 : X264_QP_AUTO;

    size = x264_encoder_encode(x->x264, &nals, &n_nals, &x->pic, &out_pic);
    if (size <= 0 || n_nals <= 0) {
        /* zerolatency has no delay, so no output means failure. */
        g_set_error(error, QS_VIDEO_ERROR, QS_VIDEO_ERROR_FAILED,
                    "x264 produced no frame (%d)", size);
        return FALSE;
    }
    /* The NAL payloads are contiguous in x264's buffer, valid until the next
     * call: copy them out once. */
    frame->data = g_bytes_new(nals[0].p_payload, (gsize)size);
    frame->keyframe = out_pic.b_keyframe && out_pic.i_type == X264_TYPE_IDR;
    frame->starved = !qp && enc->quality > 0 &&
                     out_pic.prop.f_crf_avg >= enc->quality + QS_VIDEO_STARVED_CRF_STEPS;
    return TRUE;
}

static void retune(QsVideoEncoder *enc, QsX264 *x, uint32_t bps)
{
    set_rate(&x->param, bps, enc->fps);
    /* Failure leaves the old rate, which is still a working stream. */
    if (x264_encoder_reconfig(x->x264, &x->param) < 0) {
        g_debug("x264 kept its old bit rate");
        return;
    }
    x->applied_bps = bps;
}

/* Follows the source's frame interval (see the top of the file). */
static void follow_interval(QsVideoEncoder *enc, QsX264 *x)
{
    uint32_t bps = scaled_bitrate(enc, x, enc->source_interval_us), cur = x->applied_bps;

    if (bps > cur + cur / 5 || bps < cur - cur / 5) {
        retune(enc, x, bps);
    }
}

static gboolean x264_encode(QsVideoEncoder *enc, const uint8_t *pixels,
                            size_t stride, gboolean force_keyframe,
                            QsVideoFrame *frame, GError **error)
{
    QsX264 *x = enc->priv;

    x->flush_bits = ((x->flush_bits << 1) | (guint)x->flushed) &
                    ((1u << QS_X264_FLUSH_WINDOW) - 1);
    x->flushed = FALSE;
    follow_interval(enc, x);

    qs_video_bgrx_to_i420(pixels, stride, enc->width, enc->height,
                          x->pic.img.plane[0], (size_t)x->pic.img.i_stride[0],
                          x->pic.img.plane[1], x->pic.img.plane[2],
                          (size_t)x->pic.img.i_stride[1]);
    return encode_pic(enc, force_keyframe, 0, frame, error);
}

/* The same picture again at the coarsest quantiser: rate control would
 * otherwise spend the frame's budget refining it; at QP 51 the residual
 * vanishes and nearly every macroblock is skipped. */
static gboolean x264_flush(QsVideoEncoder *enc, QsVideoFrame *frame,
                           GError **error)
{
    QsX264 *x = enc->priv;

    x->flushed = TRUE;
    return encode_pic(enc, FALSE, 51, frame, error);
}

static void x264_set_bitrate(QsVideoEncoder *enc)
{
    QsX264 *x = enc->priv;

    retune(enc, x, scaled_bitrate(enc, x, enc->source_interval_us));
}

static void x264_fini(QsVideoEncoder *enc)
{
    QsX264 *x = enc->priv;

    x264_picture_clean(&x->pic);
    x264_encoder_close(x->x264);
    g_free(x);
}

const QsVideoBackend qs_video_x264_backend = {
    .init = x264_init,
    .encode = x264_encode,
    .set_bitrate = x264_set_bitrate,
    .flush = x264_flush,
    .fini = x264_fini,
};
