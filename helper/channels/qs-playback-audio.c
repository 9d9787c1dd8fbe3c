/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qemu's output voices to the one SPICE playback stream: the first enabled voice plays, converted to S16 stereo. */
#include "channels/qs-playback-audio.h"
#include "channels/qs-playback.h"

#include <string.h>

/*
 * SPICE has one playback stream per client; qemu may have several voices
 * (one per audiodev in practice, as its mixer mixes the guest's devices).
 * The first voice that is enabled plays until it is disabled or finished;
 * another enabled voice then takes over. Only in this file: the helper
 * links it, tests drive qs_channels_audio_* directly.
 */
typedef struct {
    gboolean used;
    uint64_t id;
    QsAudioFormat format;
    gboolean enabled;
} Voice;

struct QsPlaybackAudio {
    QsChannels *channels;
    QsAudioOut *out;
    Voice voices[QS_AUDIO_MAX_VOICES];
    Voice *playing;
};

static Voice *find(QsPlaybackAudio *pa, uint64_t id)
{
    for (guint i = 0; i < QS_AUDIO_MAX_VOICES; i++) {
        if (pa->voices[i].used && pa->voices[i].id == id) {
            return &pa->voices[i];
        }
    }
    return NULL;
}

static void play(QsPlaybackAudio *pa, Voice *v)
{
    pa->playing = v;
    g_debug("audio: playing voice %" G_GUINT64_FORMAT ": %u bits%s, %u Hz, %u channels",
            v->id, v->format.bits, v->format.is_float ? " float" : "",
            v->format.freq, v->format.nchannels);
    qs_channels_audio_start(pa->channels, v->format.freq);
}

/* The playing voice stopped: silence, or the next enabled voice. */
static void stop(QsPlaybackAudio *pa)
{
    pa->playing = NULL;
    qs_channels_audio_stop(pa->channels);
    for (guint i = 0; i < QS_AUDIO_MAX_VOICES; i++) {
        if (pa->voices[i].used && pa->voices[i].enabled) {
            play(pa, &pa->voices[i]);
            return;
        }
    }
}

static void on_available(gboolean available, gpointer data)
{
    QsPlaybackAudio *pa = data;

    if (!available) {
        memset(pa->voices, 0, sizeof(pa->voices));
        pa->playing = NULL;
    }
    qs_channels_audio_set_available(pa->channels, available);
}

static void on_init(uint64_t id, const QsAudioFormat *format, gpointer data)
{
    QsPlaybackAudio *pa = data;
    Voice *v = find(pa, id);

    for (guint i = 0; !v && i < QS_AUDIO_MAX_VOICES; i++) {
        if (!pa->voices[i].used) {
            v = &pa->voices[i];
        }
    }
    if (!v) {
        return;         /* the door keeps no more voices than this either */
    }
    if (v == pa->playing) {
        /* New format for the voice that plays: restart at its rate. */
        pa->playing = NULL;
        qs_channels_audio_stop(pa->channels);
    }
    *v = (Voice){ .used = TRUE, .id = id, .format = *format };
}

static void on_fini(uint64_t id, gpointer data)
{
    QsPlaybackAudio *pa = data;
    Voice *v = find(pa, id);

    if (!v) {
        return;
    }
    v->used = FALSE;
    if (v == pa->playing) {
        stop(pa);
    }
}

static void on_enabled(uint64_t id, gboolean enabled, gpointer data)
{
    QsPlaybackAudio *pa = data;
    Voice *v = find(pa, id);

    if (!v) {
        return;
    }
    v->enabled = enabled;
    if (enabled && !pa->playing) {
        play(pa, v);
    } else if (!enabled && v == pa->playing) {
        stop(pa);
    }
}

static void on_volume(uint64_t id, gboolean mute, const uint8_t *volume, guint n,
                      gpointer data)
{
    QsPlaybackAudio *pa = data;
    Voice *v = find(pa, id);

    /* Before a voice plays, any voice's volume is the best guess. */
    if (v && (!pa->playing || v == pa->playing)) {
        qs_channels_audio_volume(pa->channels, mute, volume, n);
    }
}

static void on_write(uint64_t id, GBytes *pcm, gpointer data)
{
    QsPlaybackAudio *pa = data;
    Voice *v = find(pa, id);
    g_autoptr(GBytes) s16 = NULL;

    if (!v) {
        return;
    }
    if (!pa->playing) {
        /* Sound from a voice not announced as enabled: play it anyway. */
        v->enabled = TRUE;
        play(pa, v);
    }
    if (v != pa->playing) {
        return;
    }
    s16 = qs_pcm_to_s16_stereo(&v->format, pcm);
    qs_channels_audio_data(pa->channels, s16);
}

QsPlaybackAudio *qs_playback_audio_new(QsChannels *channels, QsAudioOut *out)
{
    static const QsAudioOutFuncs funcs = {
        .available = on_available,
        .init = on_init,
        .fini = on_fini,
        .enabled = on_enabled,
        .volume = on_volume,
        .write = on_write,
    };
    QsPlaybackAudio *pa = g_new0(QsPlaybackAudio, 1);

    pa->channels = channels;
    pa->out = out;
    qs_audio_out_set_funcs(out, &funcs, pa);
    return pa;
}

void qs_playback_audio_free(QsPlaybackAudio *pa)
{
    if (!pa) {
        return;
    }
    qs_audio_out_set_funcs(pa->out, NULL, NULL);
    g_free(pa);
}
