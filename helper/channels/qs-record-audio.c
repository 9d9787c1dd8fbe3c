/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qemu's recorded voice to the record channel: S16 mono or stereo is asked of the client as it is; other formats are not recorded, said once. */
#include "channels/qs-record-audio.h"

/*
 * spice-gtk records S16 only, at the rate and channel count RECORD_START
 * names, so a voice in that format (qemu's default: S16 stereo at the
 * audiodev's in.frequency, 44100 Hz) takes the client's sound unchanged.
 * Only in this file: the helper links it, tests drive qs_channels_record_*
 * directly.
 */
struct QsRecordAudio {
    QsChannels *channels;
    QsAudioIn *in;
    gboolean told_format;
};

static gboolean format_ok(const QsAudioFormat *f)
{
    return f->bits == 16 && f->is_signed && !f->is_float && !f->be &&
           (f->nchannels == 1 || f->nchannels == 2);
}

static void on_available(gboolean available, gpointer data)
{
    QsRecordAudio *ra = data;

    if (available) {
        g_message("audio: registered with qemu's D-Bus audio capture: clients "
                  "are offered a record channel");
    }
    qs_channels_record_set_available(ra->channels, available);
}

static void on_start(const QsAudioFormat *f, gpointer data)
{
    QsRecordAudio *ra = data;

    if (!format_ok(f)) {
        if (!ra->told_format) {
            ra->told_format = TRUE;
            g_message("record: qemu captures %u-bit%s%s%s PCM with %u channels, not "
                      "16-bit signed little-endian mono or stereo, the only format "
                      "SPICE clients record; the guest gets silence (set the "
                      "audiodev's in.format=s16)", f->bits,
                      f->is_signed ? " signed" : " unsigned", f->is_float ? " float" : "",
                      f->be ? " big-endian" : "", f->nchannels);
        }
        return;
    }
    g_message("record: the guest records: asking the client for S16 at %u Hz, "
              "%u channel%s", f->freq, f->nchannels, f->nchannels == 1 ? "" : "s");
    qs_channels_record_start(ra->channels, f->freq, f->nchannels);
}

static void on_stop(gpointer data)
{
    QsRecordAudio *ra = data;

    qs_channels_record_stop(ra->channels);
}

static void on_volume(gboolean mute, const uint8_t *volume, guint n, gpointer data)
{
    QsRecordAudio *ra = data;

    qs_channels_record_volume(ra->channels, mute, volume, n);
}

static void on_client_sound(const uint8_t *pcm, gsize size, gpointer data)
{
    QsRecordAudio *ra = data;

    qs_audio_in_push(ra->in, pcm, size);
}

QsRecordAudio *qs_record_audio_new(QsChannels *channels, QsAudioIn *in)
{
    static const QsAudioInFuncs funcs = {
        .available = on_available,
        .start = on_start,
        .stop = on_stop,
        .volume = on_volume,
    };
    QsRecordAudio *ra = g_new0(QsRecordAudio, 1);

    ra->channels = channels;
    ra->in = in;
    qs_audio_in_set_funcs(in, &funcs, ra);
    qs_channels_record_set_sink(channels, on_client_sound, ra);
    return ra;
}

void qs_record_audio_free(QsRecordAudio *ra)
{
    if (!ra) {
        return;
    }
    qs_audio_in_set_funcs(ra->in, NULL, NULL);
    qs_channels_record_set_sink(ra->channels, NULL, NULL);
    g_free(ra);
}
