/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Simulated surroundings for flow tests: a TCP link drained at its rate, and the screen's heat. */
#include "flow-sim.h"

#define MSS 1448

typedef struct {
    double start;         /* us, first byte onto the link */
    uint64_t off;         /* stream offset of its first byte */
    uint64_t bytes;
    double rate;          /* bytes per us while it was transmitted */
} Span;

struct FlowSimLink {
    double rate;          /* bytes per us */
    int64_t rtt_us;
    uint64_t written;
    double busy_until;
    GArray *spans;        /* back-to-back transmission runs, in order */
};

FlowSimLink *flow_sim_link_new(double bits_per_sec, int64_t rtt_us)
{
    FlowSimLink *link = g_new0(FlowSimLink, 1);

    link->rate = bits_per_sec / 8.0 / 1e6;
    link->rtt_us = rtt_us;
    link->spans = g_array_new(FALSE, FALSE, sizeof(Span));
    return link;
}

void flow_sim_link_free(FlowSimLink *link)
{
    if (link) {
        g_array_unref(link->spans);
        g_free(link);
    }
}

/* Bytes fully onto the link by time t. */
static uint64_t transmitted(const FlowSimLink *link, double t)
{
    guint lo = 0, hi = link->spans->len;
    const Span *s;
    double done;

    if (hi == 0) {
        return link->written;
    }
    if (t < g_array_index(link->spans, Span, 0).start) {
        return g_array_index(link->spans, Span, 0).off;
    }
    while (hi - lo > 1) {                      /* last span starting <= t */
        guint mid = (lo + hi) / 2;

        if (g_array_index(link->spans, Span, mid).start <= t) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    s = &g_array_index(link->spans, Span, lo);
    done = (t - s->start) * s->rate;
    return s->off + (done >= (double)s->bytes ? s->bytes : (uint64_t)done);
}

static void prune(FlowSimLink *link, int64_t now_us)
{
    guint n = 0;

    /* Keep spans that may still be queried (acked() looks one RTT back). */
    while (n + 1 < link->spans->len) {
        const Span *s = &g_array_index(link->spans, Span, n);

        if (s->start + (double)s->bytes / s->rate + (double)link->rtt_us >=
            (double)now_us - 1e6) {
            break;
        }
        n++;
    }
    if (n > 64) {
        g_array_remove_range(link->spans, 0, n);
    }
}

double flow_sim_link_write(FlowSimLink *link, int64_t now_us, uint64_t bytes)
{
    double start = MAX((double)now_us, link->busy_until);

    if (bytes == 0) {
        return start;
    }
    if (link->spans->len && start == link->busy_until &&
        g_array_index(link->spans, Span, link->spans->len - 1).rate == link->rate) {
        g_array_index(link->spans, Span, link->spans->len - 1).bytes += bytes;
    } else {
        Span s = { start, link->written, bytes, link->rate };

        g_array_append_val(link->spans, s);
    }
    link->written += bytes;
    link->busy_until = start + (double)bytes / link->rate;
    prune(link, now_us);
    return start;
}

uint64_t flow_sim_link_written(const FlowSimLink *link)
{
    return link->written;
}

uint64_t flow_sim_link_acked(FlowSimLink *link, int64_t now_us)
{
    return transmitted(link, (double)(now_us - link->rtt_us));
}

uint64_t flow_sim_link_queued(FlowSimLink *link, int64_t now_us)
{
    return link->written - flow_sim_link_acked(link, now_us);
}

void flow_sim_link_facts(FlowSimLink *link, int64_t now_us, QsLinkFacts *out)
{
    uint64_t sent = transmitted(link, (double)now_us);
    uint64_t acked = flow_sim_link_acked(link, now_us);
    uint32_t seg_us = (uint32_t)(MSS / link->rate);

    *out = (QsLinkFacts){
        .bytes_written = link->written,
        .bytes_acked = acked,
        .unsent_bytes = (uint32_t)(link->written - sent),
        .in_flight_bytes = (uint32_t)(sent - acked),
        /* The kernel times a segment from its first byte out to its ACK. */
        .rtt_us = (uint32_t)link->rtt_us + seg_us,
        .min_rtt_us = (uint32_t)link->rtt_us + seg_us,
    };
}

void flow_sim_link_set_rate(FlowSimLink *link, double bits_per_sec)
{
    link->rate = bits_per_sec / 8.0 / 1e6;
}

double flow_sim_link_bytes_per_sec(const FlowSimLink *link)
{
    return link->rate * 1e6;
}

int64_t flow_sim_link_rtt_us(const FlowSimLink *link)
{
    return link->rtt_us;
}

uint64_t flow_sim_link_bdp(const FlowSimLink *link)
{
    return (uint64_t)(link->rate * (double)link->rtt_us);
}

int64_t flow_sim_overlap(const QsRect *a, const QsRect *b)
{
    int64_t x0 = MAX(a->x, b->x), y0 = MAX(a->y, b->y);
    int64_t x1 = MIN((int64_t)a->x + a->width, (int64_t)b->x + b->width);
    int64_t y1 = MIN((int64_t)a->y + a->height, (int64_t)b->y + b->height);

    return x1 > x0 && y1 > y0 ? (x1 - x0) * (y1 - y0) : 0;
}

uint32_t flow_sim_image_bytes(GRand *rng, const QsRect *r, const QsRect *noise,
                              const QsRect *glyph)
{
    int64_t area = (int64_t)r->width * r->height;
    int64_t n = flow_sim_overlap(r, noise);
    int64_t g = flow_sim_overlap(r, glyph);
    double noise_bpp = g_rand_double_range(rng, 1.0, 3.0);

    return (uint32_t)(200 + n * noise_bpp + g * 1.0 + (area - n - g) * 0.25);
}

struct FlowSimHeat {
    QsScreen *screen;
    QsScreenHeat *snapshot;
    int64_t snapshot_us;
    uint32_t value;
    uint32_t *pixels;                /* one rectangle's, reused */
    size_t n_pixels;
};

FlowSimHeat *flow_sim_heat_new(uint32_t width, uint32_t height, int64_t now_us)
{
    FlowSimHeat *h = g_new0(FlowSimHeat, 1);
    g_autofree uint32_t *black = g_new0(uint32_t, (size_t)width * height);

    h->screen = qs_screen_new();
    g_assert_true(qs_screen_scanout(h->screen, width, height, width * 4, QS_PIXMAN_X8R8G8B8,
                                    (const uint8_t *)black, (size_t)width * height * 4,
                                    now_us, NULL));
    return h;
}

void flow_sim_heat_free(FlowSimHeat *h)
{
    if (!h) {
        return;
    }
    qs_screen_heat_free(h->snapshot);
    qs_screen_free(h->screen);
    g_free(h->pixels);
    g_free(h);
}

void flow_sim_heat_change(FlowSimHeat *h, const QsRect *r, int64_t now_us)
{
    size_t n = (size_t)r->width * r->height;

    if (n > h->n_pixels) {
        h->pixels = g_renew(uint32_t, h->pixels, n);
        h->n_pixels = n;
    }
    /* The screen stores no X byte, so only the colour may carry the news. */
    h->value = (h->value + 1) & 0xffffff;
    for (size_t i = 0; i < n; i++) {
        h->pixels[i] = h->value;
    }
    g_assert_true(qs_screen_update(h->screen, r->x, r->y, r->width, r->height,
                                   (uint32_t)r->width * 4, QS_PIXMAN_X8R8G8B8,
                                   (const uint8_t *)h->pixels, n * 4, now_us, NULL));
}

void flow_sim_heat_feed(FlowSimHeat *h, QsScheduler *sched, int64_t now_us)
{
    if (h->snapshot && now_us - h->snapshot_us < FLOW_SIM_HEAT_US) {
        return;
    }
    qs_scheduler_set_heat(sched, NULL);
    qs_screen_heat_free(h->snapshot);
    h->snapshot = qs_screen_heat_snapshot(h->screen, now_us);
    h->snapshot_us = now_us;
    qs_scheduler_set_heat(sched, h->snapshot);
}
