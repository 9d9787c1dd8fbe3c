/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The record channel: START/STOP as the guest records, the client's raw S16 sound (DATA) to the hub's sink, VOLUME and MUTE. */
#include "channels/qs-msg.h"
#include "channels/qs-playback.h"
#include "channels/qs-session.h"

#include <spice/enums.h>
#include <spice/protocol.h>

/*
 * The client records only between START and STOP, at the format START
 * names (S16, qemu's rate and channels), and says which codec it uses with
 * MODE before its first DATA. We offer no codec, so a client that names
 * one is broken or hostile: its record channel is closed, nothing else.
 * DATA carries whole frames as a rule; the sink (QsAudioPace) keeps a
 * split frame for the next packet anyway.
 */
typedef struct {
    QsChannel base;
    gboolean started;           /* START sent, no STOP since */
} QsRecordChannel;

static void send_volume(QsRecordChannel *rc, const QsRecordState *st)
{
    if (!st->has_volume || !qs_channel_has_cap(&rc->base, SPICE_RECORD_CAP_VOLUME)) {
        return;
    }
    qs_channel_send(&rc->base, SPICE_MSG_RECORD_VOLUME,
                    qs_msg_audio_volume(st->volume, st->n_volume));
    qs_channel_send(&rc->base, SPICE_MSG_RECORD_MUTE, qs_msg_audio_mute(st->mute));
}

static void send_start(QsRecordChannel *rc, const QsRecordState *st)
{
    rc->started = TRUE;
    qs_channel_send(&rc->base, SPICE_MSG_RECORD_START,
                    qs_msg_record_start(st->nchannels, SPICE_AUDIO_FMT_S16, st->freq));
}

static void send_stop(QsRecordChannel *rc)
{
    if (rc->started) {
        rc->started = FALSE;
        qs_channel_send(&rc->base, SPICE_MSG_RECORD_STOP, NULL);
    }
}

static gboolean record_handle(QsChannel *ch, const QsClientMsg *msg, GError **error)
{
    QsRecordChannel *rc = (QsRecordChannel *)ch;
    QsRecordState *st;

    switch (msg->type) {
    case SPICE_MSGC_RECORD_MODE:
        if (msg->u.record.mode != SPICE_AUDIO_DATA_MODE_RAW) {
            g_set_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_PROTOCOL,
                        "record channel: the client sends audio mode %u; only raw "
                        "PCM (mode %u) was offered", msg->u.record.mode,
                        SPICE_AUDIO_DATA_MODE_RAW);
            return FALSE;
        }
        return TRUE;
    case SPICE_MSGC_RECORD_DATA:
        /* DATA after a STOP is in flight, not an error; DATA before any
         * MODE is taken as raw (the only mode there is). */
        st = ch->session ? qs_channels_record_state(ch->session->hub) : NULL;
        if (!rc->started || !st || !st->recording || !st->sink || msg->u.record.len == 0) {
            return TRUE;
        }
        st->sink(msg->u.record.data, msg->u.record.len, st->sink_data);
        return TRUE;
    default:
        return TRUE;    /* START_MARK; the base messages */
    }
}

static const QsChannelClass record_class = {
    .name = "record",
    .parse = qs_record_msg_parse,
    .handle = record_handle,
};

QsChannel *qs_record_channel_new(QsSession *session, QsConn *conn)
{
    QsRecordChannel *rc = (QsRecordChannel *)qs_channel_new(
        &record_class, sizeof(QsRecordChannel), session, conn);
    const QsRecordState *st = qs_channels_record_state(session->hub);

    send_volume(rc, st);
    if (st->recording) {
        send_start(rc, st);
    }
    return &rc->base;
}

/* ---- the hub's side: qemu's capture --------------------------------------- */

static QsRecordChannel *current(QsChannels *hub)
{
    QsSession *session = qs_channels_session(hub);

    return session ? (QsRecordChannel *)session->record : NULL;
}

void qs_channels_record_set_sink(QsChannels *hub, QsRecordSink sink, gpointer data)
{
    QsRecordState *st = qs_channels_record_state(hub);

    st->sink = sink;
    st->sink_data = data;
}

void qs_channels_record_set_available(QsChannels *hub, gboolean available)
{
    QsRecordState *st = qs_channels_record_state(hub);

    if (!available) {
        qs_channels_record_stop(hub);
    }
    st->available = available;
}

gboolean qs_channels_record_is_available(QsChannels *hub)
{
    return qs_channels_record_state(hub)->available;
}

void qs_channels_record_start(QsChannels *hub, uint32_t freq, uint8_t nchannels)
{
    QsRecordState *st = qs_channels_record_state(hub);
    QsRecordChannel *rc = current(hub);

    st->recording = TRUE;
    st->freq = freq;
    st->nchannels = nchannels;
    if (rc) {
        send_start(rc, st);
    }
}

void qs_channels_record_stop(QsChannels *hub)
{
    QsRecordState *st = qs_channels_record_state(hub);
    QsRecordChannel *rc = current(hub);

    st->recording = FALSE;
    if (rc) {
        send_stop(rc);
    }
}

void qs_channels_record_volume(QsChannels *hub, gboolean mute, const uint8_t *volume,
                               guint n)
{
    QsRecordState *st = qs_channels_record_state(hub);
    QsRecordChannel *rc = current(hub);

    if (n == 0) {
        return;
    }
    n = MIN(n, (guint)G_N_ELEMENTS(st->volume));
    for (guint i = 0; i < n; i++) {
        st->volume[i] = qs_playback_volume_from_qemu(volume[i]);
    }
    st->n_volume = (uint8_t)n;
    st->mute = !!mute;
    st->has_volume = TRUE;
    if (rc) {
        send_volume(rc, st);
    }
}
