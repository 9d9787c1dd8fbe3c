/* SPDX-License-Identifier: GPL-2.0-or-later */
/* How far past now a video frame is stamped, learnt from the margins the client reports. */
#include "flow/qs-frame-time.h"

/*
 * Why the worst residual of a window and not a mean or the last report
 * (what this replaced): the client drops any frame that arrives after its
 * time, so the lead must cover the worst of the noise; a controller that
 * steered one sampled margin per 20 frames towards 5 ms left 2-4 % of the
 * frames late behind a 2 Mbit tbf. Why a fit and not only an offset: the
 * error grew with the frame's size (the bandwidth estimate was 1.3-1.9x
 * the rate frames drained at), and an offset alone must then cover the
 * largest frame's error on every frame. Why a bound on the spread: a
 * frame behind a megabyte of lossless images waits for the client to
 * decode them (measured: up to 900 ms on the unshaped link); covering that
 * would hold every frame of the next seconds as long, so such a frame is
 * let be late. Why a window counted in reports,
 * not in time: a link that carries no stream teaches nothing, so the lead
 * it had stays.
 */

typedef struct {
    uint32_t id;
    uint32_t stamp;
    int32_t lead;
    uint32_t delivery;
    gboolean reported;
} Sent;

typedef struct {
    double x;                         /* delivery estimate, ms */
    double y;                         /* stamping to arrival in the client's clock, ms */
} Sample;

struct QsFrameTime {
    Sent sent[QS_FRAME_TIME_SENT];
    unsigned sent_head, sent_len;     /* ring, oldest at head */

    Sample sample[QS_FRAME_TIME_WINDOW];
    unsigned sample_next, sample_len;
    double a, b;                      /* y = a + b x */
    int32_t offset;
    uint64_t reports;
};

QsFrameTime *qs_frame_time_new(void)
{
    QsFrameTime *ft = g_new0(QsFrameTime, 1);

    ft->offset = QS_FRAME_TIME_INITIAL_OFFSET_MS;
    ft->b = 1.0;
    return ft;
}

void qs_frame_time_free(QsFrameTime *ft)
{
    g_free(ft);
}

uint32_t qs_frame_time_lead(const QsFrameTime *ft, uint32_t delivery_ms, uint32_t hold_ms)
{
    double lead = ft->a + ft->b * MIN(delivery_ms, (uint32_t)QS_FRAME_TIME_MAX_MS) + ft->offset +
                  MIN(hold_ms, (uint32_t)QS_FRAME_TIME_MAX_MS) + QS_FRAME_TIME_GUARD_MS;

    return (uint32_t)CLAMP(lead + 0.999, 0, QS_FRAME_TIME_MAX_MS);
}

void qs_frame_time_sent(QsFrameTime *ft, uint32_t id, uint32_t stamp, int32_t lead_ms,
                        uint32_t delivery_ms)
{
    if (ft->sent_len == QS_FRAME_TIME_SENT) {
        /* Its report is overdue: a client reports each frame as it reads
         * it, and 64 frames are seconds of video. */
        ft->sent_head = (ft->sent_head + 1) % QS_FRAME_TIME_SENT;
        ft->sent_len--;
    }
    ft->sent[(ft->sent_head + ft->sent_len) % QS_FRAME_TIME_SENT] =
        (Sent){ id, stamp, lead_ms, delivery_ms, FALSE };
    ft->sent_len++;
}

/* The median of n values, reordering them. Not qsort(): glibc's asks
 * sysconf(_SC_PHYS_PAGES) (sysinfo(2)) for arrays of 1 KiB and more, which
 * the helper's seccomp filter kills. */
static double median(double *v, unsigned n)
{
    for (unsigned i = 1; i < n; i++) {
        double x = v[i];
        unsigned j = i;

        for (; j > 0 && v[j - 1] > x; j--) {
            v[j] = v[j - 1];
        }
        v[j] = x;
    }
    return v[n / 2];
}

/* The scale by least squares over the window, kept within [0, 4] (a
 * window of like frames says nothing about it: then 1); the level a the
 * median residual; the offset covers the worst residual, at most
 * QS_FRAME_TIME_SPREAD_MAX_MS above the level. */
static void recompute(QsFrameTime *ft)
{
    double n = ft->sample_len, sx = 0, sy = 0, sxx = 0, sxy = 0;
    double r[QS_FRAME_TIME_WINDOW], worst = -G_MAXDOUBLE;

    for (unsigned i = 0; i < ft->sample_len; i++) {
        sx += ft->sample[i].x;
        sy += ft->sample[i].y;
        sxx += ft->sample[i].x * ft->sample[i].x;
        sxy += ft->sample[i].x * ft->sample[i].y;
    }
    ft->b = 1.0;
    if (ft->sample_len >= QS_FRAME_TIME_FIT_MIN && n * sxx - sx * sx > n * n * 4.0) {
        /* x spreads by more than 2 ms (its variance above 4 ms^2). */
        ft->b = CLAMP((n * sxy - sx * sy) / (n * sxx - sx * sx), 0.0, 4.0);
    }
    /* The level is the median, not the mean: a second of frames queued
     * behind images the client decodes first would drag a mean up, and the
     * lead with it, for a whole window. */
    for (unsigned i = 0; i < ft->sample_len; i++) {
        r[i] = ft->sample[i].y - ft->b * ft->sample[i].x;
        worst = MAX(worst, r[i]);
    }
    ft->a = median(r, ft->sample_len);
    worst = MIN(worst - ft->a, QS_FRAME_TIME_SPREAD_MAX_MS);
    ft->offset = (int32_t)CLAMP(worst + 0.999, -QS_FRAME_TIME_MAX_MS, QS_FRAME_TIME_MAX_MS);
}

gboolean qs_frame_time_report(QsFrameTime *ft, uint32_t id, uint32_t stamp, int32_t margin)
{
    unsigned i;
    Sent *s = NULL;
    int64_t y;

    /* The oldest unreported match: reports come in the order frames were
     * sent, and two frames of a stream may share a stamp. */
    for (i = 0; i < ft->sent_len; i++) {
        Sent *c = &ft->sent[(ft->sent_head + i) % QS_FRAME_TIME_SENT];

        if (c->id == id && c->stamp == stamp && !c->reported) {
            s = c;
            break;
        }
    }
    if (!s) {
        return FALSE;
    }
    s->reported = TRUE;
    /* Frames before it were reported or never will be (the client reports
     * in order): free their slots. */
    ft->sent_head = (ft->sent_head + i + 1) % QS_FRAME_TIME_SENT;
    ft->sent_len -= i + 1;

    y = (int64_t)s->lead - margin;
    ft->sample[ft->sample_next] = (Sample){
        MIN(s->delivery, (uint32_t)QS_FRAME_TIME_MAX_MS),
        (double)CLAMP(y, -QS_FRAME_TIME_MAX_MS, QS_FRAME_TIME_MAX_MS) };
    ft->sample_next = (ft->sample_next + 1) % QS_FRAME_TIME_WINDOW;
    ft->sample_len = MIN(ft->sample_len + 1, QS_FRAME_TIME_WINDOW);
    ft->reports++;
    recompute(ft);
    return TRUE;
}

int32_t qs_frame_time_offset(const QsFrameTime *ft)
{
    return ft->offset;
}

int32_t qs_frame_time_scale_milli(const QsFrameTime *ft)
{
    return (int32_t)(ft->b * 1000);
}

uint64_t qs_frame_time_reports(const QsFrameTime *ft)
{
    return ft->reports;
}

uint32_t qs_mm_time_from_monotonic(int64_t monotonic_us)
{
    return (uint32_t)(uint64_t)(monotonic_us / 1000);
}

uint32_t qs_stream_stamp_next(uint32_t last, uint32_t last_now, uint32_t now,
                              uint32_t wanted)
{
    if (last != 0) {
        int32_t since = (int32_t)(now - last_now);
        uint32_t least = last + (uint32_t)MAX(since, 0) / 2;

        if ((int32_t)(wanted - least) < 0) {
            wanted = least;
        }
    }
    return wanted == 0 ? 1 : wanted;
}
