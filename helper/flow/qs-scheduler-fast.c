/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The scheduler's fast lane: small groups of cold dirty blocks, oldest first. */
#include "flow/qs-scheduler-private.h"

#include <string.h>

static gboolean is_cold_dirty(const QsScheduler *s, uint32_t c, uint32_t r)
{
    return qs_damage_is_dirty(s->damage, c, r) && !qs_scheduler_hot(s, c, r);
}

static void flood(QsScheduler *s, uint32_t c0, uint32_t r0, uint32_t lab,
                  uint32_t now_ms, Cand *out)
{
    uint32_t cols = qs_damage_cols(s->damage), rows = qs_damage_rows(s->damage);
    uint32_t c1 = c0, r1 = r0, oldest_age = 0;
    uint32_t start = r0 * cols + c0;

    *out = (Cand){ c0, r0, 0, 0, 0 };
    g_array_set_size(s->stack, 0);
    g_array_append_val(s->stack, start);
    s->label[start] = lab;
    while (s->stack->len) {
        uint32_t i = g_array_index(s->stack, uint32_t, s->stack->len - 1);
        uint32_t c = i % cols, r = i / cols;
        uint32_t age = now_ms - qs_damage_since_ms(s->damage, c, r);
        const int32_t dc[4] = { -1, 1, 0, 0 }, dr[4] = { 0, 0, -1, 1 };

        g_array_set_size(s->stack, s->stack->len - 1);
        if (age >= oldest_age) {
            oldest_age = age;
            out->since_ms = qs_damage_since_ms(s->damage, c, r);
        }
        out->col = MIN(out->col, c);
        out->row = MIN(out->row, r);
        c1 = MAX(c1, c);
        r1 = MAX(r1, r);
        for (unsigned k = 0; k < 4; k++) {
            int64_t nc = (int64_t)c + dc[k], nr = (int64_t)r + dr[k];
            uint32_t ni;

            if (nc < 0 || nr < 0 || nc >= cols || nr >= rows) {
                continue;
            }
            ni = (uint32_t)nr * cols + (uint32_t)nc;
            if (s->label[ni] != lab &&
                is_cold_dirty(s, (uint32_t)nc, (uint32_t)nr)) {
                s->label[ni] = lab;
                g_array_append_val(s->stack, ni);
            }
        }
    }
    out->cols = c1 - out->col + 1;
    out->rows = r1 - out->row + 1;
}

static gint cmp_age(gconstpointer a, gconstpointer b, gpointer now_ms)
{
    uint32_t now = GPOINTER_TO_UINT(now_ms);
    uint32_t age_a = now - ((const Cand *)a)->since_ms;
    uint32_t age_b = now - ((const Cand *)b)->since_ms;

    return age_a > age_b ? -1 : age_a < age_b ? 1 : 0;
}

void qs_scheduler_find_fast(QsScheduler *s, int64_t now_us)
{
    uint32_t cols = qs_damage_cols(s->damage), rows = qs_damage_rows(s->damage);
    uint32_t now_ms = (uint32_t)(now_us / 1000);
    uint32_t lab;

    /* Our own clears never create a candidate, only damage or heat does. */
    if (s->fast_valid && s->fast_gen == s->add_gen && s->fast_heat_gen == s->heat_gen) {
        return;
    }
    s->fast_valid = TRUE;
    s->fast_gen = s->add_gen;
    s->fast_heat_gen = s->heat_gen;
    g_array_set_size(s->fast, 0);
    /* A fresh mark per pass avoids clearing the map each time. */
    if (++s->pass == 0) {
        memset(s->label, 0, (size_t)cols * rows * sizeof(uint32_t));
        s->pass = 1;
    }
    lab = s->pass;
    for (uint32_t r = 0; r < rows; r++) {
        if (qs_damage_row_dirty(s->damage, r) == 0) {
            continue;
        }
        for (uint32_t c = 0; c < cols; c++) {
            Cand cand;

            if (s->label[r * cols + c] == lab || !is_cold_dirty(s, c, r)) {
                continue;
            }
            flood(s, c, r, lab, now_ms, &cand);
            if ((uint64_t)cand.cols * cand.rows <= QS_SCHED_FAST_MAX_BLOCKS) {
                g_array_append_val(s->fast, cand);
            }
        }
    }
    g_array_sort_with_data(s->fast, cmp_age, GUINT_TO_POINTER(now_ms));
}

gboolean qs_scheduler_cand_has_dirty(const QsScheduler *s, const Cand *c)
{
    for (uint32_t r = c->row; r < c->row + c->rows; r++) {
        for (uint32_t k = c->col; k < c->col + c->cols; k++) {
            if (qs_damage_is_dirty(s->damage, k, r)) {
                return TRUE;
            }
        }
    }
    return FALSE;
}
