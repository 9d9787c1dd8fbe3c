/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Our AudioInListener: registration with qemu, Read answered on the peer thread, the recorded voice's changes to the main context. */
#include "display/qs-audio-in.h"

#include <string.h>

#include "display/qs-audio-listener.h"
#include "flow/qs-audio-pace.h"
#include "qs-dbus-display1.h"

/* The client's sound waiting for qemu, and the most one Read gets. */
#define MAX_QUEUE_MS 200u

typedef enum {
    EV_START = QS_AUDIO_EVENT_OWN,
    EV_STOP,
    EV_VOLUME,
} EventKind;

typedef struct {
    QsAudioEvent head;
    QsAudioFormat format;           /* EV_START */
    gboolean mute;                  /* EV_VOLUME */
    uint8_t volume[QS_AUDIO_MAX_CHANNELS];
    guint n_volume;
} Event;

typedef struct {
    gboolean used, enabled;
    uint64_t id;
    QsAudioFormat format;
    QsAudioPace *pace;
} Voice;

struct QsAudioIn {
    QsAudioListener *listener;

    /* Shared with the peer thread, under the listener's lock. */
    Voice voices[QS_AUDIO_MAX_VOICES];
    Voice *recording;               /* the voice the client's sound feeds */
    QsAudioInCounts done;           /* of voices freed already */
    uint64_t bytes_per_second;      /* of the last voice recorded, for the summary */
};

static Event *event_new(EventKind kind)
{
    Event *e = g_new0(Event, 1);

    e->head.kind = kind;
    return e;
}

static void event_free(QsAudioEvent *e)
{
    g_free(e);
}

/* ---- peer thread ----------------------------------------------------------- */

/* With the lock held. */
static void post_locked(QsAudioIn *in, Event *e)
{
    qs_audio_listener_post_locked(in->listener, &e->head);
}

/* With the lock held. */
static Voice *find_voice(QsAudioIn *in, uint64_t id)
{
    for (guint i = 0; i < QS_AUDIO_MAX_VOICES; i++) {
        if (in->voices[i].used && in->voices[i].id == id) {
            return &in->voices[i];
        }
    }
    return NULL;
}

/* With the lock held: `v` becomes the recorded voice. */
static void record(QsAudioIn *in, Voice *v)
{
    Event *e = event_new(EV_START);

    in->recording = v;
    in->bytes_per_second = v->format.bytes_per_second;
    qs_audio_pace_reset(v->pace);
    e->format = v->format;
    post_locked(in, e);
}

/* With the lock held: the recorded voice stops; another enabled one takes
 * over. */
static void stop_recording(QsAudioIn *in)
{
    in->recording = NULL;
    post_locked(in, event_new(EV_STOP));
    for (guint i = 0; i < QS_AUDIO_MAX_VOICES; i++) {
        if (in->voices[i].used && in->voices[i].enabled) {
            record(in, &in->voices[i]);
            return;
        }
    }
}

/* With the lock held. */
static void voice_clear(QsAudioIn *in, Voice *v)
{
    QsAudioPaceStats st;

    if (v->pace) {
        qs_audio_pace_get_stats(v->pace, &st);
        in->done.client += st.read - st.silence;
        in->done.silence += st.silence;
        in->done.dropped += st.dropped;
        qs_audio_pace_free(v->pace);
    }
    *v = (Voice){ 0 };
}

static void voice_init(uint64_t id, const QsAudioFormat *format, gpointer data)
{
    QsAudioIn *in = data;
    Voice *v;

    qs_audio_listener_lock(in->listener);
    v = find_voice(in, id);
    if (v) {
        /* A new format for a known voice: it starts over, not enabled
         * until qemu says so, and another enabled voice may take over. */
        v->enabled = FALSE;
        if (v == in->recording) {
            stop_recording(in);
        }
        voice_clear(in, v);
    }
    for (guint i = 0; !v && i < QS_AUDIO_MAX_VOICES; i++) {
        if (!in->voices[i].used) {
            v = &in->voices[i];
        }
    }
    if (v) {
        *v = (Voice){ .used = TRUE, .id = id, .format = *format };
        v->pace = qs_audio_pace_new(format->bytes_per_frame, format->bytes_per_second,
                                    MAX_QUEUE_MS);
    }
    qs_audio_listener_unlock(in->listener);
    if (!v) {
        g_warning("audio: qemu has more than %u capture voices; voice %"
                  G_GUINT64_FORMAT " ignored", QS_AUDIO_MAX_VOICES, id);
    }
}

static void voice_fini(uint64_t id, gpointer data)
{
    QsAudioIn *in = data;
    Voice *v;

    qs_audio_listener_lock(in->listener);
    if ((v = find_voice(in, id))) {
        v->enabled = FALSE;
        if (v == in->recording) {
            stop_recording(in);
        }
        voice_clear(in, v);
    }
    qs_audio_listener_unlock(in->listener);
}

static void voice_enable(uint64_t id, gboolean enabled, gpointer data)
{
    QsAudioIn *in = data;
    Voice *v;

    qs_audio_listener_lock(in->listener);
    if ((v = find_voice(in, id)) && v->enabled != !!enabled) {
        v->enabled = !!enabled;
        qs_audio_pace_reset(v->pace);
        if (enabled && !in->recording) {
            record(in, v);
        } else if (!enabled && v == in->recording) {
            stop_recording(in);
        }
    }
    qs_audio_listener_unlock(in->listener);
}

static void voice_volume(uint64_t id, gboolean mute, const uint8_t *volume, gsize n,
                      gpointer data)
{
    QsAudioIn *in = data;
    Voice *v;

    qs_audio_listener_lock(in->listener);
    v = find_voice(in, id);
    /* Before a voice records, any voice's volume is the best guess. */
    if (v && n > 0 && (!in->recording || v == in->recording)) {
        Event *e = event_new(EV_VOLUME);

        e->mute = !!mute;
        e->n_volume = (guint)MIN(n, (gsize)QS_AUDIO_MAX_CHANNELS);
        memcpy(e->volume, volume, e->n_volume);
        post_locked(in, e);
    }
    qs_audio_listener_unlock(in->listener);
}

static gboolean on_read(QemuDBusDisplay1AudioInListener *skel,
                        GDBusMethodInvocation *inv, guint64 id, guint64 size,
                        gpointer data)
{
    QsAudioIn *in = data;
    uint8_t *buf = NULL;
    gsize n = 0;
    Voice *v;

    qs_audio_listener_lock(in->listener);
    v = find_voice(in, id);
    if (v) {
        /* qemu asks for its whole free buffer; more than the queue's worth
         * is never due at once. */
        gsize max = (gsize)v->format.bytes_per_second * MAX_QUEUE_MS / 1000;

        size = MIN(size, (guint64)max);
        buf = g_malloc(MAX(size, 1));
        n = qs_audio_pace_read(v->pace, buf, (gsize)size, g_get_monotonic_time());
    }
    qs_audio_listener_unlock(in->listener);
    qemu_dbus_display1_audio_in_listener_complete_read(
        skel, inv, g_variant_new_from_data(G_VARIANT_TYPE("ay"), buf, n, TRUE,
                                           g_free, buf));
    return TRUE;
}

/* ---- main context ---------------------------------------------------------- */

static void deliver(const QsAudioEvent *head, gconstpointer funcs, gpointer user_data)
{
    const QsAudioInFuncs *f = funcs;
    const Event *e = (const Event *)head;

    if (head->kind == EV_START) {
        f->start(&e->format, user_data);
    } else if (head->kind == EV_STOP) {
        f->stop(user_data);
    } else if (head->kind == EV_VOLUME) {
        f->volume(e->mute, e->volume, e->n_volume, user_data);
    }
}

static const QsAudioListenerClass listener_class = {
    .init = voice_init,
    .fini = voice_fini,
    .enabled = voice_enable,
    .volume = voice_volume,
    .call = G_CALLBACK(on_read),
    .deliver = deliver,
    .event_free = event_free,
};

/* One line at the end, when a client recorded: how much of its sound
 * reached qemu, and how much was lost to a client ahead of qemu. */
static void log_summary(QsAudioIn *in)
{
    QsAudioInCounts c;
    double bps;

    qs_audio_in_get_counts(in, &c);
    if (c.client == 0 || in->bytes_per_second == 0) {
        return;
    }
    bps = (double)in->bytes_per_second;
    g_message("record: %.1f s of the clients' sound reached qemu, %.1f s of silence "
              "where none came, %.3f s dropped (sent faster than qemu read)",
              (double)c.client / bps, (double)c.silence / bps, (double)c.dropped / bps);
}

QsAudioIn *qs_audio_in_new(GDBusConnection *conn, const char *dest)
{
    QsAudioIn *in = g_new0(QsAudioIn, 1);

    in->listener = qs_audio_listener_new(conn, dest, QS_AUDIO_IN_LISTENER, &listener_class, in);
    return in;
}

void qs_audio_in_free(QsAudioIn *in)
{
    if (!in) {
        return;
    }
    /* qemu reads no more: the summary is final. */
    qs_audio_listener_retire(in->listener);
    log_summary(in);
    /* Not g_clear_pointer: the peer thread's handlers use in->listener
     * until the free has joined it. */
    qs_audio_listener_free(in->listener);
    for (guint i = 0; i < QS_AUDIO_MAX_VOICES; i++) {
        voice_clear(in, &in->voices[i]);
    }
    g_free(in);
}

void qs_audio_in_set_funcs(QsAudioIn *in, const QsAudioInFuncs *funcs,
                           gpointer user_data)
{
    qs_audio_listener_set_funcs(in->listener, funcs, funcs ? funcs->available : NULL,
                                user_data);
}

gboolean qs_audio_in_start(QsAudioIn *in, QsDisplayAudio audio)
{
    return audio == QS_DISPLAY_AUDIO_YES && qs_audio_listener_start(in->listener);
}

gboolean qs_audio_in_is_available(QsAudioIn *in)
{
    return qs_audio_listener_is_available(in->listener);
}

void qs_audio_in_push(QsAudioIn *in, const uint8_t *pcm, gsize size)
{
    qs_audio_listener_lock(in->listener);
    if (in->recording) {
        qs_audio_pace_push(in->recording->pace, pcm, size, g_get_monotonic_time());
    }
    qs_audio_listener_unlock(in->listener);
}

void qs_audio_in_get_counts(QsAudioIn *in, QsAudioInCounts *counts)
{
    qs_audio_listener_lock(in->listener);
    *counts = in->done;
    for (guint i = 0; i < QS_AUDIO_MAX_VOICES; i++) {
        QsAudioPaceStats st;

        if (in->voices[i].used) {
            qs_audio_pace_get_stats(in->voices[i].pace, &st);
            counts->client += st.read - st.silence;
            counts->silence += st.silence;
            counts->dropped += st.dropped;
        }
    }
    qs_audio_listener_unlock(in->listener);
}
