/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsAudioPace: a bounded byte ring of the client's sound and the clock that says how much of it a Read gets. */
#include "flow/qs-audio-pace.h"

#include <string.h>

struct QsAudioPace {
    uint32_t bpf, bps;
    gsize cap;                  /* ring capacity, whole frames */
    uint8_t *ring;
    gsize head, fill;           /* oldest byte, bytes held */
    uint8_t partial[64];        /* a frame split across pushes */
    gsize n_partial;
    gboolean clock_started;
    int64_t origin_us;
    uint64_t delivered;         /* bytes since origin */
    gboolean ever_pushed;
    int64_t last_push_us;
    QsAudioPaceStats stats;
};

QsAudioPace *qs_audio_pace_new(uint32_t bytes_per_frame, uint32_t bytes_per_second,
                               uint32_t max_ms)
{
    QsAudioPace *p = g_new0(QsAudioPace, 1);
    uint64_t cap = (uint64_t)bytes_per_second * MAX(max_ms, 10u) / 1000;

    p->bpf = MAX(bytes_per_frame, 1u);
    p->bps = bytes_per_second;
    p->cap = (gsize)MAX(cap - cap % p->bpf, (uint64_t)p->bpf);
    p->ring = g_malloc(p->cap);
    return p;
}

void qs_audio_pace_free(QsAudioPace *p)
{
    if (p) {
        g_free(p->ring);
        g_free(p);
    }
}

void qs_audio_pace_reset(QsAudioPace *p)
{
    p->head = p->fill = p->n_partial = 0;
    p->clock_started = FALSE;
    p->delivered = 0;
    p->ever_pushed = FALSE;
}

static void ring_drop(QsAudioPace *p, gsize n)
{
    p->head = (p->head + n) % p->cap;
    p->fill -= n;
}

/* Whole frames only: the ring's fill stays a multiple of bpf. */
static void ring_put(QsAudioPace *p, const uint8_t *data, gsize n)
{
    if (n > p->cap) {
        p->stats.dropped += n - p->cap;
        data += n - p->cap;
        n = p->cap;
    }
    if (p->fill + n > p->cap) {
        gsize over = p->fill + n - p->cap;

        p->stats.dropped += over;
        ring_drop(p, over);
    }
    for (gsize done = 0; done < n;) {
        gsize at = (p->head + p->fill) % p->cap;
        gsize run = MIN(n - done, p->cap - at);

        memcpy(p->ring + at, data + done, run);
        p->fill += run;
        done += run;
    }
}

static void ring_take(QsAudioPace *p, uint8_t *out, gsize n)
{
    for (gsize done = 0; done < n;) {
        gsize run = MIN(n - done, p->cap - p->head);

        memcpy(out + done, p->ring + p->head, run);
        ring_drop(p, run);
        done += run;
    }
}

void qs_audio_pace_push(QsAudioPace *p, const uint8_t *data, gsize size, int64_t now_us)
{
    gsize whole;

    if (size == 0) {
        return;
    }
    p->stats.pushed += size;
    p->ever_pushed = TRUE;
    p->last_push_us = now_us;
    if (p->n_partial && p->bpf <= sizeof(p->partial)) {
        gsize need = MIN(p->bpf - p->n_partial, size);

        memcpy(p->partial + p->n_partial, data, need);
        p->n_partial += need;
        data += need;
        size -= need;
        if (p->n_partial < p->bpf) {
            return;
        }
        ring_put(p, p->partial, p->bpf);
        p->n_partial = 0;
    }
    whole = size - size % p->bpf;
    ring_put(p, data, whole);
    if (size > whole && p->bpf <= sizeof(p->partial)) {
        memcpy(p->partial, data + whole, size - whole);
        p->n_partial = size - whole;
    }
}

gsize qs_audio_pace_read(QsAudioPace *p, uint8_t *out, gsize size, int64_t now_us)
{
    uint64_t due, owed, n, take;

    if (!p->clock_started) {
        p->clock_started = TRUE;
        p->origin_us = now_us;
        p->delivered = 0;
    }
    due = (uint64_t)MAX(now_us - p->origin_us, (int64_t)0) * p->bps / G_USEC_PER_SEC;
    due -= due % p->bpf;
    owed = due > p->delivered ? due - p->delivered : 0;
    if (owed > p->cap) {
        /* qemu did not ask for a while (the VM was stopped): what it
         * missed is not owed, or it would get a burst of old sound. */
        p->delivered = due - p->cap;
        owed = p->cap;
    }
    n = MIN(owed, (uint64_t)(size - size % p->bpf));
    take = MIN(n, (uint64_t)p->fill);
    ring_take(p, out, (gsize)take);
    if (take < n && p->fill == 0 &&
        (!p->ever_pushed || now_us - p->last_push_us > QS_AUDIO_PACE_STARVED_US)) {
        memset(out + take, 0, (gsize)(n - take));
        p->stats.silence += n - take;
        take = n;
    }
    p->delivered += take;
    p->stats.read += take;
    return (gsize)take;
}

void qs_audio_pace_get_stats(const QsAudioPace *p, QsAudioPaceStats *stats)
{
    *stats = p->stats;
}
