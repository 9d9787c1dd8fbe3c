/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Linear-interpolation rate conversion of S16 stereo, its phase kept across calls. */
#include "encode/qs-audio-resample.h"

#define CHANNELS 2
#define MAX_RATE 192000u

struct QsResampler {
    uint32_t in_rate, out_rate;
    /* The next output frame lies at input position pos / out_rate, counted
     * from `last` (input frame -1): an exact fraction, so no drift. */
    uint64_t pos;
    int16_t last[CHANNELS];
    gboolean have_last;
};

QsResampler *qs_resampler_new(uint32_t in_rate, uint32_t out_rate)
{
    QsResampler *rs;

    g_return_val_if_fail(in_rate > 0 && in_rate <= MAX_RATE, NULL);
    g_return_val_if_fail(out_rate > 0 && out_rate <= MAX_RATE, NULL);
    rs = g_new0(QsResampler, 1);
    rs->in_rate = in_rate;
    rs->out_rate = out_rate;
    return rs;
}

void qs_resampler_free(QsResampler *rs)
{
    g_free(rs);
}

static int16_t sample(const uint8_t *p)
{
    return (int16_t)(uint16_t)(p[0] | (p[1] << 8));
}

GBytes *qs_resampler_run(QsResampler *rs, GBytes *s16_stereo)
{
    gsize size = 0;
    const uint8_t *in = g_bytes_get_data(s16_stereo, &size);
    uint64_t n_in = size / (CHANNELS * 2);
    /* Output frames fall at positions pos, pos + in_rate, ... (in units of
     * 1/out_rate input frames); each needs the input frames on both sides,
     * so at most (n_in * out_rate) / in_rate + 1 of them come from this call. */
    uint64_t cap = n_in * rs->out_rate / rs->in_rate + 2;
    GByteArray *out = g_byte_array_sized_new((guint)(cap * CHANNELS * 2));
    uint64_t end;

    if (n_in == 0) {
        return g_byte_array_free_to_bytes(out);
    }
    if (!rs->have_last) {
        /* The first frame stands at position 0: start there, not before it. */
        for (guint c = 0; c < CHANNELS; c++) {
            rs->last[c] = sample(in + c * 2);
        }
        rs->have_last = TRUE;
        rs->pos = rs->out_rate;
    }
    /* Input frame i (0-based in this call) is at position (i + 1) * out_rate;
     * `last` at 0. Interpolate while the frame after the position exists. */
    end = n_in * rs->out_rate;
    while (rs->pos <= end) {
        uint64_t i = rs->pos / rs->out_rate;        /* frame at or before: i - 1 */
        uint64_t frac = rs->pos % rs->out_rate;
        uint8_t frame[CHANNELS * 2];

        for (guint c = 0; c < CHANNELS; c++) {
            int32_t a = i == 0 ? rs->last[c] : sample(in + ((i - 1) * CHANNELS + c) * 2);
            int32_t b = frac == 0 ? a : sample(in + (i * CHANNELS + c) * 2);
            int32_t v = a + (int32_t)(((int64_t)(b - a) * (int64_t)frac) / rs->out_rate);

            frame[c * 2] = (uint8_t)(v & 0xff);
            frame[c * 2 + 1] = (uint8_t)(((uint32_t)v >> 8) & 0xff);
        }
        g_byte_array_append(out, frame, sizeof(frame));
        rs->pos += rs->in_rate;
    }
    for (guint c = 0; c < CHANNELS; c++) {
        rs->last[c] = sample(in + ((n_in - 1) * CHANNELS + c) * 2);
    }
    rs->pos -= end;
    return g_byte_array_free_to_bytes(out);
}
