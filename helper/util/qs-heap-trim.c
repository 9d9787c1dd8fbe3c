/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A delayed, coalesced malloc_trim on the default main context. */
#include "util/qs-heap-trim.h"

#include <malloc.h>

/* Main context only. */
static guint trim_source;
static guint trims;

static gboolean on_trim(gpointer unused)
{
    (void)unused;
    trim_source = 0;
    malloc_trim(0);
    trims++;
    return G_SOURCE_REMOVE;
}

void qs_heap_trim_soon(void)
{
    g_clear_handle_id(&trim_source, g_source_remove);
    trim_source = g_timeout_add(QS_HEAP_TRIM_DELAY_MS, on_trim, NULL);
}

guint qs_heap_trim_count(void)
{
    return trims;
}

gint64 qs_heap_trim_due_us(void)
{
    GSource *source = trim_source ? g_main_context_find_source_by_id(NULL, trim_source) : NULL;

    return source ? g_source_get_ready_time(source) : -1;
}
