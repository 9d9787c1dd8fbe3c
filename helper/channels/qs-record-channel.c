/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The record channel: START/STOP as the guest records, the client's sound (Opus or raw S16) in qemu's format to the context's record sink, VOLUME and MUTE. */
#include "wire/qs-msg.h"
#include "channels/qs-record-channel.h"
#include "channels/qs-playback.h"
#include "channels/qs-session.h"
#include "encode/qs-audio-opus-dec.h"
#include "encode/qs-audio-resample.h"

#include <spice/enums.h>
#include <spice/protocol.h>

/*
 * The client records only between START and STOP, at the format START
 * names, and says which codec it uses with MODE before its first DATA.
 * spice-gtk chooses Opus when we offer it and START names a rate Opus
 * codes, and its Opus is always stereo; so a client with OPUS is asked for
 * stereo at qemu's rate if Opus codes it, else at 48 kHz, converted back
 * to qemu's rate here (about 100 kbit/s from the client instead of 1.4
 * Mbit/s of raw 44.1 kHz stereo). A client without it is asked for qemu's
 * own format and sends raw S16. A mode we did not offer, or a packet that
 * does not decode, closes the record channel, nothing else.
 */
typedef struct {
    QsChannel base;
    gboolean started;           /* START sent, no STOP since */
    uint32_t freq;              /* what START named */
    uint8_t nchannels;
    QsOpusDec *opus;            /* after MODE OPUS */
    QsResampler *resampler;     /* START's rate to qemu's, stereo */
    gboolean told_mode;         /* the mode's log line is out */
} QsRecordChannel;

#define OPUS_FALLBACK_RATE 48000u

static void send_volume(QsRecordChannel *rc, const QsAudioVolume *volume)
{
    if (!volume->known || !qs_channel_has_cap(&rc->base, SPICE_RECORD_CAP_VOLUME)) {
        return;
    }
    qs_channel_send(&rc->base, SPICE_MSG_RECORD_VOLUME,
                    qs_msg_audio_volume(volume->volume, volume->n));
    qs_channel_send(&rc->base, SPICE_MSG_RECORD_MUTE, qs_msg_audio_mute(volume->mute));
}

static void forget_codec(QsRecordChannel *rc)
{
    g_clear_pointer(&rc->opus, qs_opus_dec_free);
    g_clear_pointer(&rc->resampler, qs_resampler_free);
}

static void send_start(QsRecordChannel *rc, const QsRecordState *st)
{
    forget_codec(rc);
    rc->started = TRUE;
    rc->freq = st->freq;
    rc->nchannels = st->nchannels;
    if (qs_channel_has_cap(&rc->base, SPICE_RECORD_CAP_OPUS)) {
        rc->freq = qs_opus_rate_ok(st->freq) ? st->freq : OPUS_FALLBACK_RATE;
        rc->nchannels = 2;
        if (rc->freq != st->freq) {
            rc->resampler = qs_resampler_new(rc->freq, st->freq);
        }
    }
    qs_channel_send(&rc->base, SPICE_MSG_RECORD_START,
                    qs_msg_record_start(rc->nchannels, SPICE_AUDIO_FMT_S16, rc->freq));
}

static void send_stop(QsRecordChannel *rc)
{
    forget_codec(rc);
    if (rc->started) {
        rc->started = FALSE;
        qs_channel_send(&rc->base, SPICE_MSG_RECORD_STOP, NULL);
    }
}

static void tell_mode(QsRecordChannel *rc, const QsRecordState *st)
{
    g_autofree char *conv = NULL;

    if (rc->told_mode) {
        return;
    }
    rc->told_mode = TRUE;
    if (rc->resampler) {
        conv = g_strdup_printf(" (converted to qemu's %u Hz)", st->freq);
    }
    g_message("record: %s at %u Hz from the client%s", rc->opus ? "Opus" : "raw PCM",
              rc->freq, conv ? conv : "");
}

static gboolean set_mode(QsRecordChannel *rc, uint16_t mode, GError **error)
{
    g_autoptr(GError) local = NULL;

    g_clear_pointer(&rc->opus, qs_opus_dec_free);
    if (mode == SPICE_AUDIO_DATA_MODE_RAW) {
        return TRUE;
    }
    if (mode != SPICE_AUDIO_DATA_MODE_OPUS ||
        !qs_channel_has_cap(&rc->base, SPICE_RECORD_CAP_OPUS)) {
        g_set_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_PROTOCOL,
                    "record channel: the client sends audio mode %u; only raw PCM "
                    "(mode %u)%s was offered", mode, SPICE_AUDIO_DATA_MODE_RAW,
                    qs_channel_has_cap(&rc->base, SPICE_RECORD_CAP_OPUS)
                        ? " and Opus (mode 3)" : "");
        return FALSE;
    }
    rc->opus = qs_opus_dec_new(rc->freq, &local);
    if (!rc->opus) {
        g_set_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_PROTOCOL,
                    "record channel: Opus: %s", local->message);
        return FALSE;
    }
    return TRUE;
}

/* A DATA's sound in qemu's format: decoded, converted to its rate, and to
 * mono if it is. */
static GBytes *to_qemu(QsRecordChannel *rc, const QsRecordState *st,
                       const QsClientMsg *msg, GError **error)
{
    g_autoptr(GBytes) pcm = NULL;
    g_autoptr(GError) local = NULL;

    if (rc->opus) {
        pcm = qs_opus_dec_packet(rc->opus, msg->u.record.data, msg->u.record.len, &local);
        if (!pcm) {
            g_set_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_MALFORMED,
                        "record channel: %s", local->message);
            return NULL;
        }
    } else {
        pcm = g_bytes_new(msg->u.record.data, msg->u.record.len);
    }
    if (rc->resampler) {
        GBytes *converted = qs_resampler_run(rc->resampler, pcm);

        g_bytes_unref(pcm);
        pcm = converted;
    }
    if (rc->nchannels == 2 && st->nchannels == 1) {
        GBytes *mono = qs_pcm_s16_stereo_to_mono(pcm);

        g_bytes_unref(pcm);
        pcm = mono;
    }
    return g_steal_pointer(&pcm);
}

static gboolean record_handle(QsChannel *ch, const QsClientMsg *msg, GError **error)
{
    QsRecordChannel *rc = (QsRecordChannel *)ch;
    const QsRecordState *st;

    g_autoptr(GBytes) pcm = NULL;

    switch (msg->type) {
    case SPICE_MSGC_RECORD_MODE:
        return set_mode(rc, msg->u.record.mode, error);
    case SPICE_MSGC_RECORD_DATA:
        /* DATA after a STOP is in flight, not an error; DATA before any
         * MODE is taken as raw. */
        st = ch->session ? &ch->session->ctx->record : NULL;
        if (!rc->started || !st || !st->recording || !st->sink || msg->u.record.len == 0) {
            return TRUE;
        }
        tell_mode(rc, st);
        if (!(pcm = to_qemu(rc, st, msg, error))) {
            return FALSE;
        }
        if (g_bytes_get_size(pcm) > 0) {
            st->sink(g_bytes_get_data(pcm, NULL), g_bytes_get_size(pcm), st->sink_data);
        }
        return TRUE;
    default:
        return TRUE;    /* START_MARK; the base messages */
    }
}

static void record_finalize(QsChannel *ch)
{
    forget_codec((QsRecordChannel *)ch);
}

static const QsChannelClass record_class = {
    .name = "record",
    .parse = qs_record_msg_parse,
    .handle = record_handle,
    .finalize = record_finalize,
};

QsChannel *qs_record_channel_new(QsSession *session, QsConn *conn)
{
    QsRecordChannel *rc = (QsRecordChannel *)qs_channel_new(
        &record_class, sizeof(QsRecordChannel), session, conn);
    const QsRecordState *st = &session->ctx->record;

    send_volume(rc, &st->volume);
    if (st->recording && session->ctx->ops->may_record(session, session->ctx->owner)) {
        send_start(rc, st);
    }
    return &rc->base;
}

void qs_record_channel_start(QsChannel *ch, const QsRecordState *state)
{
    send_start((QsRecordChannel *)ch, state);
}

void qs_record_channel_stop(QsChannel *ch)
{
    send_stop((QsRecordChannel *)ch);
}

void qs_record_channel_volume(QsChannel *ch, const QsAudioVolume *volume)
{
    send_volume((QsRecordChannel *)ch, volume);
}
