/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qs_wake_source_new: a source ready by ready time alone, disarmed before each dispatch. */
#include "util/qs-wake.h"

static gboolean wake_dispatch(GSource *source, GSourceFunc callback, gpointer data)
{
    /* Before the callback: a wake-up during it makes the source ready again. */
    g_source_set_ready_time(source, -1);
    return callback(data);
}

static GSourceFuncs wake_funcs = {
    .dispatch = wake_dispatch,
};

GSource *qs_wake_source_new(const char *name, GSourceFunc func, gpointer data,
                            GMainContext *ctx)
{
    GSource *source = g_source_new(&wake_funcs, sizeof(GSource));

    g_source_set_callback(source, func, data, NULL);
    g_source_set_name(source, name);
    g_source_attach(source, ctx);
    return source;
}
