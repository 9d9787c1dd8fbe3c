/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The hub's sound: qemu's output and capture state kept in the channels' context, passed to every session's playback channel and to one session's record channel. */
#include "channels/qs-channels-private.h"

/* The state is kept whether or not a client listens: a playback or record
 * channel that links later starts from it.
 *
 * Every session hears the guest; one records, the session table's
 * recorder (qs-channels-sessions.c). */

static QsChannel *record(QsChannels *hub)
{
    QsSession *s = qs_channels_recorder(hub);

    return s ? s->record : NULL;
}

/* Calls `fn` on each session's playback channel. Sessions are looked up
 * by id before each call: a send can end one. */
static void each_playback(QsChannels *hub, void (*fn)(QsChannel *ch, gpointer data),
                          gpointer data)
{
    g_autofree uint32_t *ids = qs_channels_session_ids(hub);

    for (guint k = 0; ids[k]; k++) {
        QsSession *s = qs_channels_session(hub, ids[k]);

        if (s && s->playback) {
            fn(s->playback, data);
        }
    }
}

/* qemu's volume of one direction, passed on to its channel if linked. */
static void set_volume(QsAudioVolume *v, QsChannel *ch,
                       void (*send)(QsChannel *ch, const QsAudioVolume *v),
                       gboolean mute, const uint8_t *volume, guint n)
{
    if (qs_audio_volume_set(v, mute, volume, n) && ch) {
        send(ch, v);
    }
}

static void stop_channel(QsChannel *ch, void (*stop)(QsChannel *ch))
{
    if (ch) {
        stop(ch);
    }
}

/* ---- qemu's answers ------------------------------------------------------- */

/* Sends the channel lists held for qemu's answers, once both are in. */
static void settled(QsChannels *hub)
{
    g_autofree uint32_t *ids = NULL;

    if (hub->ctx.playback.settling || hub->ctx.record.settling) {
        return;
    }
    ids = qs_channels_session_ids(hub);
    for (guint k = 0; ids[k]; k++) {
        QsSession *s = qs_channels_session(hub, ids[k]);

        if (s && s->main) {
            qs_main_channel_release_list(s->main);
        }
    }
}

void qs_channels_audio_settling(QsChannels *hub, gboolean playback, gboolean record)
{
    hub->ctx.playback.settling = playback;
    hub->ctx.record.settling = record;
    settled(hub);
}

/* One of qemu's answers is in (`settling` is that direction's flag). */
static void answered(QsChannels *hub, gboolean *settling)
{
    if (*settling) {
        *settling = FALSE;
        settled(hub);
    }
}

/* ---- qemu's sound out --------------------------------------------------- */

void qs_channels_audio_set_available(QsChannels *hub, gboolean available)
{
    if (!available) {
        qs_channels_audio_stop(hub);
    }
    hub->ctx.playback.available = available;
    answered(hub, &hub->ctx.playback.settling);
}

static void start_one(QsChannel *ch, gpointer hub)
{
    qs_playback_channel_start(ch, ((QsChannels *)hub)->ctx.playback.freq);
}

void qs_channels_audio_start(QsChannels *hub, uint32_t freq)
{
    QsPlaybackState *st = &hub->ctx.playback;

    st->playing = TRUE;
    st->freq = freq;
    each_playback(hub, start_one, hub);
}

typedef struct {
    uint32_t freq;
    GBytes *pcm;
} Data;

static void data_one(QsChannel *ch, gpointer data)
{
    const Data *d = data;

    qs_playback_channel_data(ch, d->freq, d->pcm);
}

void qs_channels_audio_data(QsChannels *hub, GBytes *s16_stereo)
{
    const QsPlaybackState *st = &hub->ctx.playback;
    Data d = { st->freq, s16_stereo };

    if (st->playing && g_bytes_get_size(s16_stereo) > 0) {
        each_playback(hub, data_one, &d);
    }
}

static void stop_one(QsChannel *ch, gpointer data)
{
    (void)data;
    qs_playback_channel_stop(ch);
}

void qs_channels_audio_stop(QsChannels *hub)
{
    hub->ctx.playback.playing = FALSE;
    each_playback(hub, stop_one, NULL);
}

static void volume_one(QsChannel *ch, gpointer volume)
{
    qs_playback_channel_volume(ch, volume);
}

void qs_channels_audio_volume(QsChannels *hub, gboolean mute, const uint8_t *volume,
                              guint n)
{
    if (qs_audio_volume_set(&hub->ctx.playback.volume, mute, volume, n)) {
        each_playback(hub, volume_one, &hub->ctx.playback.volume);
    }
}

/* ---- qemu's capture ------------------------------------------------------ */

void qs_channels_record_set_sink(QsChannels *hub, QsRecordSink sink, gpointer data)
{
    hub->ctx.record.sink = sink;
    hub->ctx.record.sink_data = data;
}

void qs_channels_record_set_available(QsChannels *hub, gboolean available)
{
    if (!available) {
        qs_channels_record_stop(hub);
    }
    hub->ctx.record.available = available;
    answered(hub, &hub->ctx.record.settling);
}

void qs_channels_record_stop(QsChannels *hub)
{
    hub->ctx.record.recording = FALSE;
    stop_channel(record(hub), qs_record_channel_stop);
}

void qs_channels_record_start(QsChannels *hub, uint32_t freq, uint8_t nchannels)
{
    QsRecordState *st = &hub->ctx.record;
    QsChannel *ch = record(hub);

    st->recording = TRUE;
    st->freq = freq;
    st->nchannels = nchannels;
    if (ch) {
        qs_record_channel_start(ch, st);
    }
}

void qs_channels_record_volume(QsChannels *hub, gboolean mute, const uint8_t *volume,
                               guint n)
{
    set_volume(&hub->ctx.record.volume, record(hub), qs_record_channel_volume,
               mute, volume, n);
}
