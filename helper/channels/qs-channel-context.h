/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsChannelContext: all a channel may know of the consoles it serves and ask of whoever owns its session. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "channels/qs-display-clock.h"
#include "channels/qs-playback.h"
#include "display/qs-cursor.h"
#include "display/qs-input.h"
#include "screen/qs-screen.h"

/* At most this many heads (display + cursor channel ids 0..n-1). */
#define QS_CHANNELS_MAX_HEADS 16

/* At most this many bridged chardevs (port, webdav, usbredir, smartcard
 * channels): QS_PORTS_MAX plus QS_USBREDIR_MAX plus one smartcard. */
#define QS_CHANNELS_MAX_BRIDGES 25

typedef struct QsAgent QsAgent;
typedef struct QsVideoShare QsVideoShare;
typedef struct QsImageShare QsImageShare;
typedef struct QsEncodeQueue QsEncodeQueue;
typedef struct QsVmcBridge QsVmcBridge;
typedef struct QsChannel QsChannel;
typedef struct QsSession QsSession;
typedef struct QsConn QsConn;

/* Makes a session's channel of one type for its linked connection. */
typedef QsChannel *(*QsChannelNewFunc)(QsSession *session, QsConn *conn);

/* One served console as its channels see it. */
typedef struct {
    QsScreen *screen;           /* never NULL */
    QsCursor *cursor;           /* or NULL */
    QsInput *input;             /* or NULL: view only */
} QsConsoleView;

/* qemu's sound output. */
typedef struct {
    gboolean available;         /* qemu's D-Bus audio registered */
    gboolean settling;          /* its answer to the registration awaited */
    gboolean playing;           /* a voice is on */
    uint32_t freq;              /* its rate; always S16 stereo */
    QsAudioVolume volume;
} QsPlaybackState;

/* Takes the client's recorded sound: whole frames in qemu's format. */
typedef void (*QsRecordSink)(const uint8_t *pcm, gsize size, gpointer data);

/* qemu's sound input. */
typedef struct {
    gboolean available;         /* qemu's capture listener registered */
    gboolean settling;          /* its answer to the registration awaited */
    gboolean recording;         /* the guest records */
    uint32_t freq;              /* S16, at this rate */
    uint8_t nchannels;          /* 1 or 2 */
    QsAudioVolume volume;
    QsRecordSink sink;          /* where the client's sound goes */
    gpointer sink_data;
} QsRecordState;

/* What a session may ask of its owner. */
typedef struct {
    /* The session ended by itself (its main channel went away); the owner
     * frees it. */
    void (*session_ended)(QsSession *session, gpointer owner);
    /* The emulated agent for a new main channel, serving the owner's
     * clipboard backend and monitors sink. */
    QsAgent *(*agent_new)(QsChannel *main, gpointer owner);
    /* May this session's new record channel start when the guest records?
     * One session at a time sends the guest its client's sound. */
    gboolean (*may_record)(QsSession *session, gpointer owner);
} QsChannelContextOps;

/*
 * Only its owner writes it, keeping it current as qemu's state changes;
 * channels read it through their session (session->ctx) while attached.
 * The owner outlives every session it hands the context to, not the
 * channels, whose connections may finish closing later: a detached
 * channel has no session and so no context.
 */
typedef struct {
    QsConsoleView heads[QS_CHANNELS_MAX_HEADS];
    guint n_heads;              /* 1..QS_CHANNELS_MAX_HEADS */
    /* Per head: the video encoders and the lossless images its viewers
     * share. */
    QsVideoShare *streams[QS_CHANNELS_MAX_HEADS];
    QsImageShare *images[QS_CHANNELS_MAX_HEADS];
    /* The encode workers every image and frame is encoded on. */
    QsEncodeQueue *encodes;
    const char *vm_name;        /* MAIN_NAME, or NULL */
    const uint8_t *vm_uuid;     /* MAIN_UUID (16 bytes), or NULL */
    /* qemu's Mouse.IsAbsolute and Keyboard.Modifiers, from head 0's input:
     * its keyboard is VM-wide. */
    gboolean mouse_absolute;
    uint16_t modifiers;
    QsPlaybackState playback;
    QsRecordState record;
    /* qemu's chardevs bridged to spicevmc channels, each offered as the
     * channel type and id it names; owned by the context's owner. */
    QsVmcBridge *bridges[QS_CHANNELS_MAX_BRIDGES];
    guint n_bridges;
    uint32_t max_fps;           /* streams' frame rate ceiling; 0: the plan's own */
    const QsDisplayClock *display_clock;    /* NULL: the real one */
    /* The channel types served, by SPICE_CHANNEL_* (qs-channel-types.h):
     * a session makes its channels from it. */
    const QsChannelNewFunc *channel_types;
    const QsChannelContextOps *ops;
    gpointer owner;
} QsChannelContext;

/* The console of display/cursor channel id `head`. The link check admits
 * only ids below n_heads; others get head 0 rather than memory beyond the
 * table. */
static inline const QsConsoleView *qs_channel_context_head(const QsChannelContext *ctx,
                                                           guint head)
{
    return &ctx->heads[head < ctx->n_heads ? head : 0];
}
