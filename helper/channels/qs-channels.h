/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsChannels: the SPICE channel layer's front door: server callbacks, the client sessions, qemu state in. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "channels/qs-channel-context.h"
#include "encode/qs-encode-queue.h"
#include "net/qs-server.h"

typedef struct QsChannels QsChannels;

/* One served qemu console: a display and a cursor channel of its index.
 * Its screen (and cursor, input) must outlive the QsChannels. */
typedef QsConsoleView QsChannelsHead;

/*
 * Several clients may watch one console at once, each in a session of its
 * own (its own channels, its own display plan paced for its own link, over
 * the shared screen). What a new client finds when max_sessions are
 * already connected:
 */
typedef enum {
    /* Its main link is answered SPICE_LINK_ERR_ERROR (before its ticket is
     * read) and the helper logs why; the sessions keep serving. */
    QS_WHEN_FULL_REFUSE,
    /* Once its ticket is accepted, the oldest session ends ("replaced by a
     * new client session"). With max_sessions 1: one viewer at a time, the
     * newest wins, as qemu's own SPICE server does. */
    QS_WHEN_FULL_REPLACE,
} QsWhenFull;

#define QS_CHANNELS_MAX_SESSIONS 16
#define QS_CHANNELS_DEFAULT_SESSIONS 4

typedef struct {
    const char *vm_name;        /* MAIN_NAME, or NULL */
    const char *vm_uuid;        /* "xxxxxxxx-xxxx-...", MAIN_UUID, or NULL */
    /* With n_heads == 0, the one head is screen/cursor/input below. */
    QsScreen *screen;
    QsCursor *cursor;
    QsInput *input;
    /* Else heads[0..n_heads-1] (<= QS_CHANNELS_MAX_HEADS), copied. The
     * keyboard, the mouse mode and the lock keys follow head 0's input
     * (qemu's keyboard is VM-wide); an absolute position goes to the input
     * of the head the client names (MOUSE_POSITION display_id). */
    const QsChannelsHead *heads;
    guint n_heads;
    /* 1..QS_CHANNELS_MAX_SESSIONS; 0 for QS_CHANNELS_DEFAULT_SESSIONS. */
    guint max_sessions;
    QsWhenFull when_full;
    /* Streams' frame rate ceiling, 1..QS_PLAN_STREAM_FPS; 0 for that. */
    uint32_t max_fps;
    /* The display channels' clock and timers (unit tests); NULL: the
     * monotonic clock and GLib timeouts. Outlives the QsChannels. */
    const QsDisplayClock *display_clock;
    /* The queue every image and frame is encoded on (a reference is
     * taken); NULL: one of its own, a worker per processor. */
    QsEncodeQueue *encodes;
    /* qemu's chardevs bridged to spicevmc channels (<=
     * QS_CHANNELS_MAX_BRIDGES), each offered as the channel its bridge
     * names; taken, freed with the QsChannels. */
    QsVmcBridge *const *bridges;
    guint n_bridges;
} QsChannelsConfig;

/* Main context of the QsServer. Registers change callbacks on the screens,
 * cursors and head 0's input, which must not have others. */
QsChannels *qs_channels_new(const QsChannelsConfig *config);
/* Closes the session; connections finish closing from the main loop. */
void qs_channels_free(QsChannels *channels);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsChannels, qs_channels_free)

/* Main context; told the number of client sessions each time it changes
 * (NULL stops it). */
typedef void (*QsChannelsSessionsFunc)(guint n_sessions, gpointer data);
void qs_channels_watch_sessions(QsChannels *channels, QsChannelsSessionsFunc func,
                                gpointer data);

/* For qs_server_new(cfg, qs_channels_server_callbacks(), channels, ...). */
const QsServerCallbacks *qs_channels_server_callbacks(void);

/* qemu's Mouse.IsAbsolute and Keyboard.Modifiers, for callers without a
 * QsInput (tests); with one, its changed callback does this. */
void qs_channels_set_mouse_absolute(QsChannels *channels, gboolean absolute);
void qs_channels_set_modifiers(QsChannels *channels, uint16_t modifiers);

/* A connected client, for the control surface's status. */
typedef struct {
    char *address;          /* its main channel's peer, "address:port" */
    gint64 since_us;        /* wall clock when its main channel linked */
    gboolean tls;           /* main channel on the TLS port */
    char **channels;        /* linked channel names, e.g. "main", "display" */
    gboolean view_only;     /* linked with the view-only ticket */
    uint64_t bytes_sent;    /* message bytes queued to it, all channels */
    /* The first display's link estimate (0: none yet). */
    uint64_t link_bytes_per_sec;
    uint32_t link_srtt_us;
} QsClientInfo;

void qs_client_info_free(QsClientInfo *info);

/* The connected clients, oldest first, as a GPtrArray of QsClientInfo that
 * frees them. */
GPtrArray *qs_channels_list_clients(QsChannels *channels);

/* Ends the session of the client whose main channel is linked from
 * `address` ("address:port", as QsClientInfo.address); FALSE if none is. */
gboolean qs_channels_drop_client(QsChannels *channels, const char *address,
                                 const char *reason);
/* Ends every client session, telling why; returns how many ended. */
guint qs_channels_drop_clients(QsChannels *channels, const char *reason);

/* qemu's answer to the audio registrations is awaited, for its output
 * and/or its capture (qs-channels-audio.c): a client asking for the channel
 * list meanwhile gets it once both answers are in (or after
 * QS_MAIN_LIST_HOLD_MS), so that it is offered the sound channels qemu
 * accepts. The *_set_available calls end the wait, as does a later call
 * here with FALSE. */
void qs_channels_audio_settling(QsChannels *channels, gboolean playback, gboolean record);

/* qemu's sound output (qs-channels-audio.c). While audio is
 * available, clients are offered a playback channel. PCM is raw S16LE
 * stereo at `freq`, whole frames. */
void qs_channels_audio_set_available(QsChannels *channels, gboolean available);
void qs_channels_audio_start(QsChannels *channels, uint32_t freq);
void qs_channels_audio_data(QsChannels *channels, GBytes *s16_stereo);
void qs_channels_audio_stop(QsChannels *channels);
/* qemu's volume: n values 0..255, one per channel. */
void qs_channels_audio_volume(QsChannels *channels, gboolean mute,
                              const uint8_t *volume, guint n);

/* qemu's sound input (qs-channels-audio.c). While it is available,
 * clients are offered a record channel; while the guest records, the
 * client is asked for S16 at `freq` with `nchannels` (1 or 2) and its
 * sound goes to the sink (QsRecordSink), whole frames, in that format. */
void qs_channels_record_set_sink(QsChannels *channels, QsRecordSink sink, gpointer data);
void qs_channels_record_set_available(QsChannels *channels, gboolean available);
void qs_channels_record_start(QsChannels *channels, uint32_t freq, uint8_t nchannels);
void qs_channels_record_stop(QsChannels *channels);
void qs_channels_record_volume(QsChannels *channels, gboolean mute,
                               const uint8_t *volume, guint n);
guint qs_channels_get_n_heads(QsChannels *channels);

/* The newest session's id, 0 if none (tests, stats). */
uint32_t qs_channels_get_session_id(QsChannels *channels);
