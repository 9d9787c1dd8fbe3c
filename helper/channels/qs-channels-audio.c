/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The hub's sound: qemu's output and capture state kept in the channels' context, and passed to the session's playback and record channels. */
#include "channels/qs-channels-private.h"

/* The state is kept whether or not a client listens: a playback or record
 * channel that links later starts from it. */

static QsChannel *playback(QsChannels *hub)
{
    return hub->session ? hub->session->playback : NULL;
}

static QsChannel *record(QsChannels *hub)
{
    return hub->session ? hub->session->record : NULL;
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

/* ---- qemu's sound out --------------------------------------------------- */

void qs_channels_audio_set_available(QsChannels *hub, gboolean available)
{
    if (!available) {
        qs_channels_audio_stop(hub);
    }
    hub->ctx.playback.available = available;
}

void qs_channels_audio_start(QsChannels *hub, uint32_t freq)
{
    QsPlaybackState *st = &hub->ctx.playback;
    QsChannel *ch = playback(hub);

    st->playing = TRUE;
    st->freq = freq;
    if (ch) {
        qs_playback_channel_start(ch, freq);
    }
}

void qs_channels_audio_data(QsChannels *hub, GBytes *s16_stereo)
{
    const QsPlaybackState *st = &hub->ctx.playback;
    QsChannel *ch = playback(hub);

    if (st->playing && ch && g_bytes_get_size(s16_stereo) > 0) {
        qs_playback_channel_data(ch, st->freq, s16_stereo);
    }
}

void qs_channels_audio_stop(QsChannels *hub)
{
    hub->ctx.playback.playing = FALSE;
    stop_channel(playback(hub), qs_playback_channel_stop);
}

void qs_channels_audio_volume(QsChannels *hub, gboolean mute, const uint8_t *volume,
                              guint n)
{
    set_volume(&hub->ctx.playback.volume, playback(hub), qs_playback_channel_volume,
               mute, volume, n);
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
