/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsHelperAudio: qemu's sound both ways, from D-Bus listener to SPICE channel. */
#include "qs-helper-audio.h"

#include "channels/qs-playback-audio.h"
#include "channels/qs-record-audio.h"
#include "display/qs-audio-in.h"
#include "display/qs-audio-out.h"

struct QsHelperAudio {
    QsChannels *channels;
    QsAudioOut *out;
    QsPlaybackAudio *playback;
    QsAudioIn *in;
    QsRecordAudio *record;
    QsDisplayAudio can;
    guint delayed;              /* test builds: the held-back start */
};

QsHelperAudio *qs_helper_audio_new(QsChannels *channels, GDBusConnection *conn,
                                   const char *dest)
{
    QsHelperAudio *a = g_new0(QsHelperAudio, 1);

    a->channels = channels;
    a->out = qs_audio_out_new(conn, dest);
    a->playback = qs_playback_audio_new(channels, a->out);
    a->in = qs_audio_in_new(conn, dest);
    a->record = qs_record_audio_new(channels, a->in);
    return a;
}

static gboolean register_both(gpointer data)
{
    QsHelperAudio *a = data;
    /* Whether an answer is still to come, for each: the channel lists
     * wait for those only. */
    gboolean out_awaited = qs_audio_out_start(a->out, a->can);
    gboolean in_awaited = qs_audio_in_start(a->in, a->can);

    a->delayed = 0;
    qs_channels_audio_settling(a->channels, out_awaited, in_awaited);
    return G_SOURCE_REMOVE;
}

void qs_helper_audio_start(QsHelperAudio *a, QsDisplayAudio can)
{
    a->can = can;
#ifdef QS_TEST_CONTROLS
    /* Test builds: QS_TEST_AUDIO_START_DELAY_MS holds the registrations
     * back, widening the moment before qemu answers so that a test can
     * link a client in it. */
    const char *env = g_getenv("QS_TEST_AUDIO_START_DELAY_MS");
    guint64 ms = 0;

    if (env && g_ascii_string_to_unsigned(env, 10, 1, 60000, &ms, NULL)) {
        g_message("audio: test build: registering with qemu's D-Bus audio in %u ms",
                  (guint)ms);
        qs_channels_audio_settling(a->channels, TRUE, TRUE);
        a->delayed = g_timeout_add((guint)ms, register_both, a);
        return;
    }
#endif
    register_both(a);
}

void qs_helper_audio_free(QsHelperAudio *a)
{
    if (!a) {
        return;
    }
    g_clear_handle_id(&a->delayed, g_source_remove);
    qs_playback_audio_free(a->playback);
    qs_audio_out_free(a->out);
    qs_record_audio_free(a->record);
    qs_audio_in_free(a->in);
    g_free(a);
}
