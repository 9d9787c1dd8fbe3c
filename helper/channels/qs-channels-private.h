/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The hub's state, shared by its own files only: qs-channels.c, qs-channels-sessions.c and qs-channels-audio.c. */
#pragma once

#include "channels/qs-agent-channel.h"
#include "channels/qs-channel-context.h"
#include "channels/qs-channels.h"
#include "channels/qs-cursor-channel.h"
#include "channels/qs-display-channel.h"
#include "channels/qs-inputs-channel.h"
#include "channels/qs-main-channel.h"
#include "channels/qs-playback-channel.h"
#include "channels/qs-record-channel.h"
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

    /* The client sessions, oldest first; the hub owns them. */
    GPtrArray *sessions;
    guint max_sessions;
    QsWhenFull when_full;
    gint64 full_logged_us;      /* the last "refused: full" line */
    guint full_unlogged;        /* refusals since, not logged */
    QsChannelsSessionsFunc sessions_func;
    gpointer sessions_data;

    /* What its sessions' agents serve (qs-channels-agent.c). */
    QsAgentHost *agents;
};

/* qs-channels-sessions.c */
QsSession *qs_channels_session(QsChannels *hub, uint32_t id);
QsSession *qs_channels_newest(QsChannels *hub);
/* A session id no session has, never 0. */
uint32_t qs_channels_new_session_id(QsChannels *hub);
/* Makes room for a new session as the policy says (ends the oldest, with
 * QS_WHEN_FULL_REPLACE) and adds it; the newest from now on. */
QsSession *qs_channels_add_session(QsChannels *hub, uint32_t id, gboolean view_only);
/* Takes `session` out of the table and frees it, telling its channels why. */
void qs_channels_end_session(QsChannels *hub, QsSession *session, const char *reason);
/* The ids of the sessions now, oldest first, 0-terminated (the table may
 * change while the caller works through them). */
uint32_t *qs_channels_session_ids(QsChannels *hub);
/* The session whose client's sound goes to the guest (never a view-only
 * one), or NULL. */
QsSession *qs_channels_recorder(QsChannels *hub);
/* After the recorder left: the next one starts, if the guest records. */
void qs_channels_record_resume(QsChannels *hub);
