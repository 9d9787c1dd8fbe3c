/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The playback channel: qemu's sound as Opus or raw S16 stereo (MODE, START, DATA, STOP, VOLUME, MUTE), its queue bounded. */
#include "wire/qs-msg.h"
#include "channels/qs-playback-channel.h"
#include "channels/qs-session.h"
#include "flow/qs-frame-time.h"
#include "encode/qs-audio-opus.h"
#include "encode/qs-audio-resample.h"

#include <spice/enums.h>
#include <spice/protocol.h>

/*
 * The playback channel has a connection of its own, so sound never waits
 * behind the display channel's bulk in one socket; what can still delay it
 * is this connection's own queue when the client reads slowly. So PCM
 * waits here, not in the connection: the connection is given at most
 * LOW_WATER bytes at a time, and what waits here is bounded to
 * QS_AUDIO_MAX_QUEUE_MS, the oldest dropped first (late sound is worth
 * less than a gap).
 */
#define LOW_WATER (16u * 1024u)
/* Where a rate Opus cannot code goes: 48 kHz, the one rate spice-html5
 * plays. */
#define OPUS_RATE 48000u

typedef struct {
    QsChannel base;
    GQueue pending;             /* DATA payloads (GBytes), oldest first */
    gsize pending_frames;       /* sound in `pending`, in frames */
    uint32_t last_time;
    gboolean started;           /* START sent, no STOP since */
    QsOpusEnc *opus;            /* while started in OPUS mode */
    QsResampler *resampler;     /* qemu's rate to OPUS_RATE, when they differ */
    uint32_t out_freq;          /* the rate START named */
    gboolean told_mode;         /* the mode's log line is out */
    uint64_t dropped;
} QsPlaybackChannel;

static uint32_t mm_now(QsPlaybackChannel *pb)
{
    uint32_t now = qs_mm_time_from_monotonic(g_get_monotonic_time());

    /* spice-gtk warns about a packet older than the previous one. */
    if ((int32_t)(now - pb->last_time) < 0) {
        now = pb->last_time;
    }
    pb->last_time = now;
    return now;
}

static void clear_pending(QsPlaybackChannel *pb)
{
    g_queue_clear_full(&pb->pending, (GDestroyNotify)g_bytes_unref);
    pb->pending_frames = 0;
}

/* The frames a queued DATA message holds: the mode is the same for all of
 * `pending` (a START clears it). */
static gsize msg_frames(QsPlaybackChannel *pb, GBytes *msg)
{
    if (pb->opus) {
        return qs_opus_enc_frame_size(pb->opus);
    }
    return (g_bytes_get_size(msg) - QS_PLAYBACK_DATA_HEADER) / QS_PLAYBACK_BYTES_PER_FRAME;
}

static void flush(QsPlaybackChannel *pb)
{
    GBytes *msg;

    while (!g_queue_is_empty(&pb->pending) &&
           qs_conn_get_queued_bytes(pb->base.conn) < LOW_WATER &&
           !qs_conn_is_closed(pb->base.conn)) {
        msg = g_queue_pop_head(&pb->pending);
        pb->pending_frames -= msg_frames(pb, msg);
        qs_channel_send(&pb->base, SPICE_MSG_PLAYBACK_DATA, msg);
    }
}

static void send_volume(QsPlaybackChannel *pb, const QsAudioVolume *volume)
{
    if (!volume->known || !qs_channel_has_cap(&pb->base, SPICE_PLAYBACK_CAP_VOLUME)) {
        return;
    }
    qs_channel_send(&pb->base, SPICE_MSG_PLAYBACK_VOLUME,
                    qs_msg_audio_volume(volume->volume, volume->n));
    qs_channel_send(&pb->base, SPICE_MSG_PLAYBACK_MUTE, qs_msg_audio_mute(volume->mute));
}

/* Opus (a 16th of raw PCM's bytes) when the client decodes it, at qemu's
 * rate if Opus codes it and converted to 48 kHz if not; raw PCM at qemu's
 * rate otherwise. Said once per client. Sets out_freq. */
static void choose_mode(QsPlaybackChannel *pb, uint32_t freq)
{
    g_autoptr(GError) error = NULL;
    uint32_t opus_freq = qs_opus_rate_ok(freq) ? freq : OPUS_RATE;

    g_clear_pointer(&pb->opus, qs_opus_enc_free);
    g_clear_pointer(&pb->resampler, qs_resampler_free);
    pb->out_freq = freq;
    if (qs_channel_has_cap(&pb->base, SPICE_PLAYBACK_CAP_OPUS) &&
        (pb->opus = qs_opus_enc_new(opus_freq, &error))) {
        pb->out_freq = opus_freq;
        if (opus_freq != freq) {
            pb->resampler = qs_resampler_new(freq, opus_freq);
        }
    }
    if (pb->told_mode) {
        return;
    }
    pb->told_mode = TRUE;
    if (pb->opus && pb->resampler) {
        g_message("playback: Opus at %u Hz, %d bit/s (qemu's %u Hz converted)",
                  opus_freq, QS_OPUS_BITRATE, freq);
    } else if (pb->opus) {
        g_message("playback: Opus at %u Hz, %d bit/s", opus_freq, QS_OPUS_BITRATE);
    } else {
        g_message("playback: raw PCM at %u Hz (%s)", freq,
                  error ? error->message : "the client does not decode Opus");
    }
}

static void send_start(QsPlaybackChannel *pb, uint32_t freq)
{
    uint32_t now = mm_now(pb);

    clear_pending(pb);
    choose_mode(pb, freq);
    qs_channel_send(&pb->base, SPICE_MSG_PLAYBACK_MODE,
                    qs_msg_playback_mode(now, pb->opus ? SPICE_AUDIO_DATA_MODE_OPUS
                                                       : SPICE_AUDIO_DATA_MODE_RAW));
    qs_channel_send(&pb->base, SPICE_MSG_PLAYBACK_START,
                    qs_msg_playback_start(QS_PLAYBACK_CHANNELS, SPICE_AUDIO_FMT_S16,
                                          pb->out_freq, now));
    pb->started = TRUE;
}

static void send_stop(QsPlaybackChannel *pb)
{
    clear_pending(pb);
    g_clear_pointer(&pb->opus, qs_opus_enc_free);
    g_clear_pointer(&pb->resampler, qs_resampler_free);
    if (pb->started) {
        qs_channel_send(&pb->base, SPICE_MSG_PLAYBACK_STOP, NULL);
        pb->started = FALSE;
    }
}

/* Bounded to `max` frames of sound, the oldest dropped first. */
static void queue_packet(QsPlaybackChannel *pb, gsize max, GBytes *payload)
{
    GBytes *msg = qs_msg_playback_data(mm_now(pb), payload);

    g_queue_push_tail(&pb->pending, msg);
    pb->pending_frames += msg_frames(pb, msg);
    while (pb->pending_frames > max && g_queue_get_length(&pb->pending) > 1) {
        GBytes *old = g_queue_pop_head(&pb->pending);

        pb->pending_frames -= msg_frames(pb, old);
        g_bytes_unref(old);
        if (pb->dropped++ % 100 == 0) {
            g_debug("playback: client reads too slowly; %" G_GUINT64_FORMAT
                    " packets of old sound dropped", pb->dropped);
        }
    }
}

static void queue_data(QsPlaybackChannel *pb, uint32_t freq, GBytes *pcm)
{
    gsize max;

    if (!pb->started) {
        send_start(pb, freq);
    }
    max = (gsize)pb->out_freq * QS_AUDIO_MAX_QUEUE_MS / 1000;
    if (pb->opus) {
        g_autoptr(GBytes) converted = pb->resampler ? qs_resampler_run(pb->resampler, pcm)
                                                    : g_bytes_ref(pcm);
        g_autoptr(GPtrArray) packets = g_ptr_array_new_with_free_func(
            (GDestroyNotify)g_bytes_unref);
        g_autoptr(GError) error = NULL;

        if (!qs_opus_enc_push(pb->opus, converted, packets, &error)) {
            g_message("playback: %s", error->message);
        }
        for (guint i = 0; i < packets->len; i++) {
            queue_packet(pb, max, g_ptr_array_index(packets, i));
        }
    } else {
        queue_packet(pb, max, pcm);
    }
    flush(pb);
}

static gboolean playback_handle(QsChannel *ch, const QsClientMsg *msg, GError **error)
{
    (void)ch, (void)msg, (void)error;
    return TRUE;        /* the parser lets only base messages through */
}

static void playback_writable(QsChannel *ch)
{
    flush((QsPlaybackChannel *)ch);
}

static void playback_finalize(QsChannel *ch)
{
    QsPlaybackChannel *pb = (QsPlaybackChannel *)ch;

    clear_pending(pb);
    g_clear_pointer(&pb->opus, qs_opus_enc_free);
    g_clear_pointer(&pb->resampler, qs_resampler_free);
}

static const QsChannelClass playback_class = {
    .name = "playback",
    .parse = qs_playback_msg_parse,
    .handle = playback_handle,
    .writable = playback_writable,
    .finalize = playback_finalize,
};

QsChannel *qs_playback_channel_new(QsSession *session, QsConn *conn)
{
    QsPlaybackChannel *pb = (QsPlaybackChannel *)qs_channel_new(
        &playback_class, sizeof(QsPlaybackChannel), session, conn);
    const QsPlaybackState *st = &session->ctx->playback;

    g_queue_init(&pb->pending);
    /* writable fires once the kernel took the connection's queue below it. */
    qs_conn_set_queue_limits(conn, LOW_WATER, QS_CONN_DEFAULT_HARD_CAP);
    send_volume(pb, &st->volume);
    if (st->playing) {
        send_start(pb, st->freq);
    }
    return &pb->base;
}

void qs_playback_channel_start(QsChannel *ch, uint32_t freq)
{
    send_start((QsPlaybackChannel *)ch, freq);
}

void qs_playback_channel_data(QsChannel *ch, uint32_t freq, GBytes *s16_stereo)
{
    queue_data((QsPlaybackChannel *)ch, freq, s16_stereo);
}

void qs_playback_channel_stop(QsChannel *ch)
{
    send_stop((QsPlaybackChannel *)ch);
}

void qs_playback_channel_volume(QsChannel *ch, const QsAudioVolume *volume)
{
    send_volume((QsPlaybackChannel *)ch, volume);
}
