/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-source token buckets for link attempts (see qs-rate-limit.h). */

#include "net/qs-rate-limit.h"

/* A bucket holds its tokens as microseconds of refill time: one attempt
 * costs `cost_us`, a full bucket is `burst` attempts, and time refills it
 * one microsecond per microsecond, so no fractions are needed. */
typedef struct {
    char *source;
    gint64 credit_us;
    gint64 updated_us;
    GList *node;        /* in QsRateLimit.lru */
} Bucket;

struct QsRateLimit {
    gint64 cost_us;
    gint64 cap_us;
    guint max_sources;
    GHashTable *buckets; /* source → Bucket (owned) */
    GQueue lru;          /* of Bucket, least recently charged first */
};

static void bucket_free(gpointer data)
{
    Bucket *b = data;

    g_free(b->source);
    g_free(b);
}

QsRateLimit *qs_rate_limit_new(guint rate, guint burst, guint max_sources)
{
    QsRateLimit *rl = g_new0(QsRateLimit, 1);

    rl->cost_us = G_USEC_PER_SEC / CLAMP(rate, 1, G_USEC_PER_SEC);
    rl->cap_us = rl->cost_us * MAX(burst, 1);
    rl->max_sources = MAX(max_sources, 1);
    rl->buckets = g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
                                        bucket_free);
    g_queue_init(&rl->lru);
    return rl;
}

void qs_rate_limit_free(QsRateLimit *rl)
{
    if (!rl) {
        return;
    }
    g_queue_clear(&rl->lru);
    g_hash_table_unref(rl->buckets);
    g_free(rl);
}

static void refill(QsRateLimit *rl, Bucket *b, gint64 now_us)
{
    /* A clock that went backwards refills nothing. */
    if (now_us > b->updated_us) {
        b->credit_us = MIN(rl->cap_us, b->credit_us + (now_us - b->updated_us));
        b->updated_us = now_us;
    }
}

static void forget(QsRateLimit *rl, Bucket *b)
{
    g_queue_delete_link(&rl->lru, b->node);
    g_hash_table_remove(rl->buckets, b->source);
}

/* A full bucket is no different from an unknown source: drop the least
 * recently charged one if it has refilled, so the table only holds
 * sources that are actually being limited. */
static void forget_refilled(QsRateLimit *rl, gint64 now_us)
{
    Bucket *b = g_queue_peek_head(&rl->lru);

    if (b) {
        refill(rl, b, now_us);
        if (b->credit_us >= rl->cap_us) {
            forget(rl, b);
        }
    }
}

gboolean qs_rate_limit_take(QsRateLimit *rl, const char *source,
                            gint64 now_us)
{
    Bucket *b;

    forget_refilled(rl, now_us);
    b = g_hash_table_lookup(rl->buckets, source);
    if (!b) {
        /* The table is bounded: past max_sources the least recently
         * charged source starts over with a full bucket. A flood from
         * more addresses than that is limited by the global bounds
         * (pending links, one key generated at a time), not by this. */
        if (g_hash_table_size(rl->buckets) >= rl->max_sources) {
            forget(rl, g_queue_peek_head(&rl->lru));
        }
        b = g_new0(Bucket, 1);
        b->source = g_strdup(source);
        b->credit_us = rl->cap_us;
        b->updated_us = now_us;
        g_hash_table_insert(rl->buckets, b->source, b);
        g_queue_push_tail(&rl->lru, b);
        b->node = rl->lru.tail;
    } else {
        refill(rl, b, now_us);
        g_queue_unlink(&rl->lru, b->node);
        g_queue_push_tail_link(&rl->lru, b->node);
    }
    if (b->credit_us < rl->cost_us) {
        return FALSE;
    }
    b->credit_us -= rl->cost_us;
    return TRUE;
}

void qs_rate_limit_refund(QsRateLimit *rl, const char *source, gint64 now_us)
{
    Bucket *b = g_hash_table_lookup(rl->buckets, source);

    /* Unknown: forgotten meanwhile, so already as good as full. */
    if (b) {
        refill(rl, b, now_us);
        b->credit_us = MIN(rl->cap_us, b->credit_us + rl->cost_us);
    }
}

guint qs_rate_limit_get_n_sources(QsRateLimit *rl)
{
    return g_hash_table_size(rl->buckets);
}
