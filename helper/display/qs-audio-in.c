/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Our AudioInListener: registration with qemu, Read answered on the peer thread, the recorded voice's changes to the main context. */
#include "display/qs-audio-in.h"

#include <string.h>

#include "display/qs-p2p-peer.h"
#include "util/qs-wake.h"
#include "flow/qs-audio-pace.h"
#include "qs-dbus-display1.h"

#define AUDIO_PATH "/org/qemu/Display1/Audio"
#define IFACE_AUDIO "org.qemu.Display1.Audio"
#define IN_LISTENER_PATH "/org/qemu/Display1/AudioInListener"
/* The client's sound waiting for qemu, and the most one Read gets. */
#define MAX_QUEUE_MS 200u

typedef enum {
    EV_READY,
    EV_CLOSED,
    EV_START,
    EV_STOP,
    EV_VOLUME,
} EventKind;

typedef struct {
    EventKind kind;
    QsAudioFormat format;           /* EV_START */
    gboolean mute;                  /* EV_VOLUME */
    uint8_t volume[QS_AUDIO_MAX_CHANNELS];
    guint n_volume;
    char *message;                  /* EV_CLOSED */
} Event;

typedef struct {
    gboolean used, enabled;
    uint64_t id;
    QsAudioFormat format;
    QsAudioPace *pace;
} Voice;

struct QsAudioIn {
    GDBusConnection *conn;          /* main connection to qemu */
    char *dest;
    GCancellable *cancellable;
    const QsAudioInFuncs *funcs;
    gpointer user_data;
    gboolean started, available, refused;
    GSource *wake;                  /* main context */

    /* Shared with the peer thread. */
    GMutex lock;
    GQueue events;
    Voice voices[QS_AUDIO_MAX_VOICES];
    Voice *recording;               /* the voice the client's sound feeds */
    QsAudioInCounts done;           /* of voices freed already */
    uint64_t bytes_per_second;      /* of the last voice recorded, for the summary */

    /* The peer thread. */
    QsP2pPeer *peer;
    QemuDBusDisplay1AudioInListener *skel;
};

static Event *event_new(EventKind kind)
{
    Event *e = g_new0(Event, 1);

    e->kind = kind;
    return e;
}

static void event_free(Event *e)
{
    g_free(e->message);
    g_free(e);
}

/* ---- peer thread ----------------------------------------------------------- */

/* With the lock held. */
static void post_locked(QsAudioIn *in, Event *e)
{
    g_queue_push_tail(&in->events, e);
    qs_wake(in->wake);
}

static void post(QsAudioIn *in, Event *e)
{
    g_mutex_lock(&in->lock);
    post_locked(in, e);
    g_mutex_unlock(&in->lock);
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

static gboolean on_init(QemuDBusDisplay1AudioInListener *skel,
                        GDBusMethodInvocation *inv, guint64 id, guchar bits,
                        gboolean is_signed, gboolean is_float, guint freq,
                        guchar nchannels, guint bytes_per_frame,
                        guint bytes_per_second, gboolean be, gpointer data)
{
    QsAudioIn *in = data;
    g_autoptr(GError) error = NULL;
    QsAudioFormat format = {
        .bits = bits, .is_signed = is_signed, .is_float = is_float, .be = be,
        .freq = freq, .nchannels = nchannels, .bytes_per_frame = bytes_per_frame,
        .bytes_per_second = bytes_per_second,
    };
    Voice *v;

    if (!qs_audio_format_check(&format, &error)) {
        g_warning("audio: capture voice %" G_GUINT64_FORMAT " ignored: %s", id,
                  error->message);
        qemu_dbus_display1_audio_in_listener_complete_init(skel, inv);
        return TRUE;
    }
    g_mutex_lock(&in->lock);
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
        *v = (Voice){ .used = TRUE, .id = id, .format = format };
        v->pace = qs_audio_pace_new(format.bytes_per_frame, format.bytes_per_second,
                                    MAX_QUEUE_MS);
    }
    g_mutex_unlock(&in->lock);
    if (!v) {
        g_warning("audio: qemu has more than %u capture voices; voice %"
                  G_GUINT64_FORMAT " ignored", QS_AUDIO_MAX_VOICES, id);
    }
    qemu_dbus_display1_audio_in_listener_complete_init(skel, inv);
    return TRUE;
}

static gboolean on_fini(QemuDBusDisplay1AudioInListener *skel,
                        GDBusMethodInvocation *inv, guint64 id, gpointer data)
{
    QsAudioIn *in = data;
    Voice *v;

    g_mutex_lock(&in->lock);
    if ((v = find_voice(in, id))) {
        v->enabled = FALSE;
        if (v == in->recording) {
            stop_recording(in);
        }
        voice_clear(in, v);
    }
    g_mutex_unlock(&in->lock);
    qemu_dbus_display1_audio_in_listener_complete_fini(skel, inv);
    return TRUE;
}

static gboolean on_set_enabled(QemuDBusDisplay1AudioInListener *skel,
                               GDBusMethodInvocation *inv, guint64 id,
                               gboolean enabled, gpointer data)
{
    QsAudioIn *in = data;
    Voice *v;

    g_mutex_lock(&in->lock);
    if ((v = find_voice(in, id)) && v->enabled != !!enabled) {
        v->enabled = !!enabled;
        qs_audio_pace_reset(v->pace);
        if (enabled && !in->recording) {
            record(in, v);
        } else if (!enabled && v == in->recording) {
            stop_recording(in);
        }
    }
    g_mutex_unlock(&in->lock);
    qemu_dbus_display1_audio_in_listener_complete_set_enabled(skel, inv);
    return TRUE;
}

static gboolean on_set_volume(QemuDBusDisplay1AudioInListener *skel,
                              GDBusMethodInvocation *inv, guint64 id,
                              gboolean mute, GVariant *volume, gpointer data)
{
    QsAudioIn *in = data;
    gsize n = 0;
    const uint8_t *vol = g_variant_get_fixed_array(volume, &n, 1);
    Voice *v;

    g_mutex_lock(&in->lock);
    v = find_voice(in, id);
    /* Before a voice records, any voice's volume is the best guess. */
    if (v && n > 0 && (!in->recording || v == in->recording)) {
        Event *e = event_new(EV_VOLUME);

        e->mute = !!mute;
        e->n_volume = (guint)MIN(n, (gsize)QS_AUDIO_MAX_CHANNELS);
        memcpy(e->volume, vol, e->n_volume);
        post_locked(in, e);
    }
    g_mutex_unlock(&in->lock);
    qemu_dbus_display1_audio_in_listener_complete_set_volume(skel, inv);
    return TRUE;
}

static gboolean on_read(QemuDBusDisplay1AudioInListener *skel,
                        GDBusMethodInvocation *inv, guint64 id, guint64 size,
                        gpointer data)
{
    QsAudioIn *in = data;
    uint8_t *buf = NULL;
    gsize n = 0;
    Voice *v;

    g_mutex_lock(&in->lock);
    v = find_voice(in, id);
    if (v) {
        /* qemu asks for its whole free buffer; more than the queue's worth
         * is never due at once. */
        gsize max = (gsize)v->format.bytes_per_second * MAX_QUEUE_MS / 1000;

        size = MIN(size, (guint64)max);
        buf = g_malloc(MAX(size, 1));
        n = qs_audio_pace_read(v->pace, buf, (gsize)size, g_get_monotonic_time());
    }
    g_mutex_unlock(&in->lock);
    qemu_dbus_display1_audio_in_listener_complete_read(
        skel, inv, g_variant_new_from_data(G_VARIANT_TYPE("ay"), buf, n, TRUE,
                                           g_free, buf));
    return TRUE;
}

static void on_peer_closed(const char *why, gpointer data)
{
    QsAudioIn *in = data;
    Event *e = event_new(EV_CLOSED);

    e->message = g_strdup(why);
    post(in, e);
}

static gboolean on_peer_export(GDBusConnection *conn, gpointer data, GError **error)
{
    static const char *const no_ifaces[] = { NULL };
    QsAudioIn *in = data;

    in->skel = qemu_dbus_display1_audio_in_listener_skeleton_new();
    qemu_dbus_display1_audio_in_listener_set_interfaces(in->skel, no_ifaces);
    g_object_connect(in->skel,
        "signal::handle-init", on_init, in,
        "signal::handle-fini", on_fini, in,
        "signal::handle-set-enabled", on_set_enabled, in,
        "signal::handle-set-volume", on_set_volume, in,
        "signal::handle-read", on_read, in,
        NULL);
    if (!g_dbus_interface_skeleton_export(G_DBUS_INTERFACE_SKELETON(in->skel),
                                          conn, IN_LISTENER_PATH, error)) {
        return FALSE;
    }
    post(in, event_new(EV_READY));
    return TRUE;
}

static void on_peer_unexport(gpointer data)
{
    QsAudioIn *in = data;

    if (in->skel) {
        g_dbus_interface_skeleton_unexport(G_DBUS_INTERFACE_SKELETON(in->skel));
        g_signal_handlers_disconnect_by_data(in->skel, in);
        g_clear_object(&in->skel);
    }
}

static const QsP2pPeerFuncs peer_funcs = {
    .export = on_peer_export,
    .unexport = on_peer_unexport,
    .closed = on_peer_closed,
};

/* ---- main context ---------------------------------------------------------- */

static void set_available(QsAudioIn *in, gboolean available)
{
    if (in->available == available) {
        return;
    }
    in->available = available;
    if (in->funcs && in->funcs->available) {
        in->funcs->available(available, in->user_data);
    }
}

static void deliver(QsAudioIn *in, const Event *e)
{
    const QsAudioInFuncs *f = in->funcs;

    switch (e->kind) {
    case EV_READY:
        /* As for the output listener: qemu may call before its reply to
         * the registration arrives. */
        if (!in->refused) {
            set_available(in, TRUE);
        }
        return;
    case EV_CLOSED:
        if (in->available) {
            g_warning("audio: qemu closed the capture listener connection (%s): "
                      "no more recording", e->message);
        }
        set_available(in, FALSE);
        return;
    default:
        break;
    }
    if (!f || !in->available) {
        return;
    }
    if (e->kind == EV_START) {
        f->start(&e->format, in->user_data);
    } else if (e->kind == EV_STOP) {
        f->stop(in->user_data);
    } else if (e->kind == EV_VOLUME) {
        f->volume(e->mute, e->volume, e->n_volume, in->user_data);
    }
}

static gboolean on_wake(gpointer data)
{
    QsAudioIn *in = data;
    GQueue events;
    Event *e;

    g_mutex_lock(&in->lock);
    events = in->events;
    g_queue_init(&in->events);
    g_mutex_unlock(&in->lock);
    while ((e = g_queue_pop_head(&events))) {
        deliver(in, e);
        event_free(e);
    }
    return G_SOURCE_CONTINUE;
}

static void on_registered(const GError *error, const char *remote, gpointer data)
{
    QsAudioIn *in = data;

    if (error) {
        in->refused = TRUE;
        g_message("audio: qemu refused our capture listener%s%s; no record channel is offered to clients (%s)",
                  remote ? ": " : "", remote ? remote : "", error->message);
    }
    set_available(in, error == NULL);
}

QsAudioIn *qs_audio_in_new(GDBusConnection *conn, const char *dest)
{
    QsAudioIn *in = g_new0(QsAudioIn, 1);
    g_autoptr(GMainContext) main_ctx = g_main_context_ref_thread_default();

    in->conn = g_object_ref(conn);
    in->dest = g_strdup(dest);
    in->cancellable = g_cancellable_new();
    g_mutex_init(&in->lock);
    g_queue_init(&in->events);
    in->wake = qs_wake_source_new("qs-audio-in-wake", on_wake, in, main_ctx);
    return in;
}

void qs_audio_in_set_funcs(QsAudioIn *in, const QsAudioInFuncs *funcs,
                           gpointer user_data)
{
    in->funcs = funcs;
    in->user_data = user_data;
}

void qs_audio_in_start(QsAudioIn *in, QsDisplayAudio audio)
{
    g_autoptr(GError) error = NULL;

    if (in->started || audio != QS_DISPLAY_AUDIO_YES) {
        return;
    }
    in->peer = qs_p2p_peer_register(in->conn, in->dest, AUDIO_PATH, IFACE_AUDIO,
                                     "RegisterInListener", "qs-audio-in", &peer_funcs, in,
                                     in->cancellable, on_registered, &error);
    if (!in->peer) {
        g_warning("audio: %s; no recording", error->message);
        return;
    }
    in->started = TRUE;
}

gboolean qs_audio_in_is_available(QsAudioIn *in)
{
    return in->available;
}

void qs_audio_in_push(QsAudioIn *in, const uint8_t *pcm, gsize size)
{
    g_mutex_lock(&in->lock);
    if (in->recording) {
        qs_audio_pace_push(in->recording->pace, pcm, size, g_get_monotonic_time());
    }
    g_mutex_unlock(&in->lock);
}

void qs_audio_in_get_counts(QsAudioIn *in, QsAudioInCounts *counts)
{
    g_mutex_lock(&in->lock);
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
    g_mutex_unlock(&in->lock);
}

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

void qs_audio_in_free(QsAudioIn *in)
{
    if (!in) {
        return;
    }
    g_cancellable_cancel(in->cancellable);
    g_clear_pointer(&in->peer, qs_p2p_peer_free);
    log_summary(in);
    g_source_destroy(in->wake);
    g_source_unref(in->wake);
    g_queue_clear_full(&in->events, (GDestroyNotify)event_free);
    for (guint i = 0; i < QS_AUDIO_MAX_VOICES; i++) {
        voice_clear(in, &in->voices[i]);
    }
    g_mutex_clear(&in->lock);
    g_object_unref(in->cancellable);
    g_object_unref(in->conn);
    g_free(in->dest);
    g_free(in);
}
