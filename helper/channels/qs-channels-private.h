/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The hub's state, shared by its own files only: qs-channels.c and qs-channels-audio.c. */
#pragma once

#include "channels/qs-channel-context.h"
#include "channels/qs-channels.h"
#include "channels/qs-session.h"

/* A head's change callbacks: which bit they raise. */
typedef struct {
    QsChannels *hub;
    guint index;                /* display and cursor channel id */
    guint screen_func;
} QsChannelsWatch;

struct QsChannels {
    /* What the channels may read (the consoles, qemu's input and sound
     * state), kept current here; its ops are the hub's. */
    QsChannelContext ctx;
    char *vm_name;              /* ctx.vm_name */
    uint8_t uuid[16];           /* ctx.vm_uuid, when one was given */
    QsChannelsWatch watches[QS_CHANNELS_MAX_HEADS];

    /* Screen and cursor changes arrive on qemu's listener threads; they
     * only raise their head's bit and make this source ready
     * (g_source_set_ready_time is thread-safe), and the main context does
     * the work. */
    GSource *wake;
    guint screen_changed;       /* bit per head */
    guint cursor_changed;

    QsSession *session;
    gint64 session_since_us;
};
