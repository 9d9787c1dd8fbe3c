/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Our AudioOutListener: registration with qemu, its p2p connection on a thread, a bounded queue to the main context. */
#include "display/qs-audio-out.h"

#include <string.h>

#include "display/qs-p2p-peer.h"
#include "util/qs-wake.h"
#include "qs-dbus-display1.h"

#define AUDIO_PATH "/org/qemu/Display1/Audio"
#define IFACE_AUDIO "org.qemu.Display1.Audio"
#define OUT_LISTENER_PATH "/org/qemu/Display1/AudioOutListener"
#define MAX_FREQ 192000u
#define MIN_FREQ 1000u

typedef enum {
    EV_INIT,
    EV_FINI,
    EV_ENABLED,
    EV_VOLUME,
    EV_WRITE,
    EV_READY,
    EV_CLOSED,
} EventKind;

typedef struct {
    EventKind kind;
    uint64_t id;
    QsAudioFormat format;           /* EV_INIT */
    gboolean flag;                  /* EV_ENABLED, EV_VOLUME (mute) */
    uint8_t volume[QS_AUDIO_MAX_CHANNELS];
    guint n_volume;
    GBytes *pcm;                    /* EV_WRITE */
    char *message;                  /* EV_CLOSED */
} Event;

/* A voice as the listener thread knows it, to bound what waits. */
typedef struct {
    gboolean used;
    uint64_t id;
    uint32_t bytes_per_frame;
    uint64_t max_queued;            /* QS_AUDIO_MAX_QUEUE_MS of it */
    uint64_t queued;                /* PCM bytes in `events` */
} Voice;

struct QsAudioOut {
    GDBusConnection *conn;          /* main connection to qemu */
    char *dest;
    GCancellable *cancellable;
    const QsAudioOutFuncs *funcs;
    gpointer user_data;
    gboolean started, available, refused;
    GSource *wake;                  /* main context */

    /* Shared with the listener thread. */
    GMutex lock;
    GQueue events;
    Voice voices[QS_AUDIO_MAX_VOICES];
    guint64 dropped;                /* atomic */

    /* The listener thread. */
    QsP2pPeer *peer;
    QemuDBusDisplay1AudioOutListener *skel;
};

gboolean qs_audio_format_check(const QsAudioFormat *f, GError **error)
{
    const char *why = NULL;

    if (f->bits != 8 && f->bits != 16 && f->bits != 32) {
        why = "sample size is not 8, 16 or 32 bits";
    } else if (f->is_float && f->bits != 32) {
        why = "float samples that are not 32 bits";
    } else if (f->nchannels == 0 || f->nchannels > QS_AUDIO_MAX_CHANNELS) {
        why = "channel count out of range";
    } else if (f->freq < MIN_FREQ || f->freq > MAX_FREQ) {
        why = "rate out of range";
    } else if (f->bytes_per_frame != (uint32_t)f->bits / 8 * f->nchannels) {
        why = "bytes per frame do not match the sample size and channels";
    } else if (f->bytes_per_second != f->freq * f->bytes_per_frame) {
        why = "bytes per second do not match the rate";
    }
    if (why) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "audio format %u bits%s%s, %u Hz, %u channels, %u/%u bytes: %s",
                    f->bits, f->is_signed ? " signed" : "", f->is_float ? " float" : "",
                    f->freq, f->nchannels, f->bytes_per_frame, f->bytes_per_second, why);
        return FALSE;
    }
    return TRUE;
}

static void event_free(Event *e)
{
    if (e->pcm) {
        g_bytes_unref(e->pcm);
    }
    g_free(e->message);
    g_free(e);
}

/* ---- listener thread ------------------------------------------------------ */

/* With the lock held. */
static Voice *find_voice(QsAudioOut *out, uint64_t id)
{
    for (guint i = 0; i < QS_AUDIO_MAX_VOICES; i++) {
        if (out->voices[i].used && out->voices[i].id == id) {
            return &out->voices[i];
        }
    }
    return NULL;
}

/* With the lock held: the voice's oldest PCM goes until its queue fits. */
static void drop_oldest(QsAudioOut *out, Voice *v)
{
    GList *l = out->events.head;

    while (l && v->queued > v->max_queued) {
        GList *next = l->next;
        Event *e = l->data;

        if (e->kind == EV_WRITE && e->id == v->id) {
            v->queued -= g_bytes_get_size(e->pcm);
            g_queue_delete_link(&out->events, l);
            event_free(e);
            g_atomic_pointer_add(&out->dropped, 1);
        }
        l = next;
    }
}

/* Listener thread -> main context, in order. */
static void post(QsAudioOut *out, Event *e)
{
    g_mutex_lock(&out->lock);
    if (e->kind == EV_INIT) {
        Voice *v = find_voice(out, e->id);

        for (guint i = 0; !v && i < QS_AUDIO_MAX_VOICES; i++) {
            if (!out->voices[i].used) {
                v = &out->voices[i];
                *v = (Voice){ .used = TRUE, .id = e->id };
            }
        }
        if (!v) {
            g_mutex_unlock(&out->lock);
            g_warning("audio: qemu has more than %u output voices; voice %"
                      G_GUINT64_FORMAT " ignored", QS_AUDIO_MAX_VOICES, e->id);
            event_free(e);
            return;
        }
        v->bytes_per_frame = e->format.bytes_per_frame;
        v->max_queued = (uint64_t)e->format.bytes_per_second * QS_AUDIO_MAX_QUEUE_MS / 1000;
    } else if (e->kind == EV_WRITE) {
        Voice *v = find_voice(out, e->id);
        gsize size = g_bytes_get_size(e->pcm);
        gsize whole = v ? size - size % v->bytes_per_frame : 0;
        gsize keep = whole;

        if (!v || whole == 0) {
            /* No Init (or a refused format) before it, or not one frame. */
            g_mutex_unlock(&out->lock);
            g_atomic_pointer_add(&out->dropped, 1);
            event_free(e);
            return;
        }
        if (keep > v->max_queued) {
            /* One Write longer than the whole budget: its newest part. */
            keep = (gsize)(v->max_queued - v->max_queued % v->bytes_per_frame);
        }
        if (keep != size) {
            GBytes *part = g_bytes_new_from_bytes(e->pcm, whole - keep, keep);

            g_bytes_unref(e->pcm);
            e->pcm = part;
        }
        v->queued += keep;
        g_queue_push_tail(&out->events, e);
        drop_oldest(out, v);
        g_mutex_unlock(&out->lock);
        qs_wake(out->wake);
        return;
    } else if (e->kind == EV_FINI) {
        Voice *v = find_voice(out, e->id);

        /* qemu may reuse the id with a new Init; what is queued still
         * plays, no longer counted. */
        if (v) {
            v->used = FALSE;
        }
    }
    g_queue_push_tail(&out->events, e);
    g_mutex_unlock(&out->lock);
    qs_wake(out->wake);
}

static Event *event_new(EventKind kind, uint64_t id)
{
    Event *e = g_new0(Event, 1);

    e->kind = kind;
    e->id = id;
    return e;
}

static gboolean on_init(QemuDBusDisplay1AudioOutListener *skel,
                        GDBusMethodInvocation *inv, guint64 id, guchar bits,
                        gboolean is_signed, gboolean is_float, guint freq,
                        guchar nchannels, guint bytes_per_frame,
                        guint bytes_per_second, gboolean be, gpointer data)
{
    QsAudioOut *out = data;
    g_autoptr(GError) error = NULL;
    Event *e = event_new(EV_INIT, id);

    e->format = (QsAudioFormat){
        .bits = bits, .is_signed = is_signed, .is_float = is_float, .be = be,
        .freq = freq, .nchannels = nchannels, .bytes_per_frame = bytes_per_frame,
        .bytes_per_second = bytes_per_second,
    };
    if (!qs_audio_format_check(&e->format, &error)) {
        g_warning("audio: voice %" G_GUINT64_FORMAT " ignored: %s", id, error->message);
        event_free(e);
    } else {
        post(out, e);
    }
    /* After the work, so qemu's next call (or a test) finds it done. */
    qemu_dbus_display1_audio_out_listener_complete_init(skel, inv);
    return TRUE;
}

static gboolean on_fini(QemuDBusDisplay1AudioOutListener *skel,
                        GDBusMethodInvocation *inv, guint64 id, gpointer data)
{
    post(data, event_new(EV_FINI, id));
    qemu_dbus_display1_audio_out_listener_complete_fini(skel, inv);
    return TRUE;
}

static gboolean on_set_enabled(QemuDBusDisplay1AudioOutListener *skel,
                               GDBusMethodInvocation *inv, guint64 id,
                               gboolean enabled, gpointer data)
{
    Event *e = event_new(EV_ENABLED, id);

    e->flag = enabled;
    post(data, e);
    qemu_dbus_display1_audio_out_listener_complete_set_enabled(skel, inv);
    return TRUE;
}

static gboolean on_set_volume(QemuDBusDisplay1AudioOutListener *skel,
                              GDBusMethodInvocation *inv, guint64 id,
                              gboolean mute, GVariant *volume, gpointer data)
{
    Event *e = event_new(EV_VOLUME, id);
    gsize n = 0;
    const uint8_t *v = g_variant_get_fixed_array(volume, &n, 1);

    e->flag = mute;
    e->n_volume = (guint)MIN(n, (gsize)QS_AUDIO_MAX_CHANNELS);
    if (e->n_volume) {
        memcpy(e->volume, v, e->n_volume);
    }
    post(data, e);
    qemu_dbus_display1_audio_out_listener_complete_set_volume(skel, inv);
    return TRUE;
}

static gboolean on_write(QemuDBusDisplay1AudioOutListener *skel,
                         GDBusMethodInvocation *inv, guint64 id,
                         GVariant *pcm, gpointer data)
{
    Event *e = event_new(EV_WRITE, id);

    /* A reference to the message's bytes, no copy. */
    e->pcm = g_variant_get_data_as_bytes(pcm);
    post(data, e);
    qemu_dbus_display1_audio_out_listener_complete_write(skel, inv);
    return TRUE;
}

/* Peer thread: qemu's connection ended or could not be made. */
static void on_peer_closed(const char *why, gpointer data)
{
    QsAudioOut *out = data;
    Event *e = event_new(EV_CLOSED, 0);

    e->message = g_strdup(why);
    post(out, e);
}

static gboolean on_peer_export(GDBusConnection *conn, gpointer data, GError **error)
{
    static const char *const no_ifaces[] = { NULL };
    QsAudioOut *out = data;

    out->skel = qemu_dbus_display1_audio_out_listener_skeleton_new();
    qemu_dbus_display1_audio_out_listener_set_interfaces(out->skel, no_ifaces);
    g_object_connect(out->skel,
        "signal::handle-init", on_init, out,
        "signal::handle-fini", on_fini, out,
        "signal::handle-set-enabled", on_set_enabled, out,
        "signal::handle-set-volume", on_set_volume, out,
        "signal::handle-write", on_write, out,
        NULL);
    if (!g_dbus_interface_skeleton_export(G_DBUS_INTERFACE_SKELETON(out->skel),
                                          conn, OUT_LISTENER_PATH, error)) {
        return FALSE;
    }
    /* Before qemu's first call can be read: ahead of it in the queue. */
    post(out, event_new(EV_READY, 0));
    return TRUE;
}

static void on_peer_unexport(gpointer data)
{
    QsAudioOut *out = data;

    if (out->skel) {
        g_dbus_interface_skeleton_unexport(G_DBUS_INTERFACE_SKELETON(out->skel));
        g_signal_handlers_disconnect_by_data(out->skel, out);
        g_clear_object(&out->skel);
    }
}

static const QsP2pPeerFuncs peer_funcs = {
    .export = on_peer_export,
    .unexport = on_peer_unexport,
    .closed = on_peer_closed,
};

/* ---- main context ---------------------------------------------------------- */

static void set_available(QsAudioOut *out, gboolean available)
{
    if (out->available == available) {
        return;
    }
    out->available = available;
    if (available) {
        g_message("audio: registered with qemu's D-Bus audio: sound is offered to clients");
    }
    if (out->funcs && out->funcs->available) {
        out->funcs->available(available, out->user_data);
    }
}

static void deliver(QsAudioOut *out, const Event *e)
{
    const QsAudioOutFuncs *f = out->funcs;

    if (e->kind == EV_READY) {
        /* qemu opens the listener connection only after accepting the
         * registration; its reply may come later (over a bus, through the
         * bus daemon) than its first calls here, which must not be lost. */
        if (!out->refused) {
            set_available(out, TRUE);
        }
        return;
    }
    if (e->kind == EV_CLOSED) {
        if (out->available) {
            g_warning("audio: qemu closed the audio listener connection (%s): "
                      "no more sound for clients", e->message);
        }
        set_available(out, FALSE);
        return;
    }
    if (!f || !out->available) {
        return;
    }
    switch (e->kind) {
    case EV_INIT:
        f->init(e->id, &e->format, out->user_data);
        break;
    case EV_FINI:
        f->fini(e->id, out->user_data);
        break;
    case EV_ENABLED:
        f->enabled(e->id, e->flag, out->user_data);
        break;
    case EV_VOLUME:
        f->volume(e->id, e->flag, e->volume, e->n_volume, out->user_data);
        break;
    case EV_WRITE:
        f->write(e->id, e->pcm, out->user_data);
        break;
    case EV_READY:
    case EV_CLOSED:
        break;
    }
}

static gboolean on_wake(gpointer data)
{
    QsAudioOut *out = data;
    GQueue events = G_QUEUE_INIT;
    Event *e;

    g_mutex_lock(&out->lock);
    events = out->events;
    g_queue_init(&out->events);
    for (GList *l = events.head; l; l = l->next) {
        Event *ev = l->data;
        Voice *v = ev->kind == EV_WRITE ? find_voice(out, ev->id) : NULL;

        if (v) {
            v->queued -= MIN(v->queued, g_bytes_get_size(ev->pcm));
        }
    }
    g_mutex_unlock(&out->lock);
    while ((e = g_queue_pop_head(&events))) {
        deliver(out, e);
        event_free(e);
    }
    return G_SOURCE_CONTINUE;
}

static void on_registered(const GError *error, const char *remote, gpointer data)
{
    QsAudioOut *out = data;

    if (error) {
        out->refused = TRUE;
        g_message("audio: qemu refused our audio listener%s%s; no sound channel is offered to clients (%s)",
                  remote ? ": " : "", remote ? remote : "", error->message);
    }
    set_available(out, error == NULL);
}

QsAudioOut *qs_audio_out_new(GDBusConnection *conn, const char *dest)
{
    QsAudioOut *out = g_new0(QsAudioOut, 1);
    g_autoptr(GMainContext) main_ctx = g_main_context_ref_thread_default();

    out->conn = g_object_ref(conn);
    out->dest = g_strdup(dest);
    out->cancellable = g_cancellable_new();
    g_mutex_init(&out->lock);
    g_queue_init(&out->events);
    out->wake = qs_wake_source_new("qs-audio-out-wake", on_wake, out, main_ctx);
    return out;
}

void qs_audio_out_set_funcs(QsAudioOut *out, const QsAudioOutFuncs *funcs,
                            gpointer user_data)
{
    out->funcs = funcs;
    out->user_data = user_data;
}

void qs_audio_out_start(QsAudioOut *out, QsDisplayAudio audio)
{
    g_autoptr(GError) error = NULL;

    if (out->started) {
        return;
    }
    if (audio == QS_DISPLAY_AUDIO_NONE) {
        g_message("audio: qemu has no D-Bus audio (it needs -audiodev dbus,id=ID "
                  "and -display dbus,...,audiodev=ID); no sound channel is "
                  "offered to clients");
        return;
    }
    if (audio == QS_DISPLAY_AUDIO_P2P_UNSAFE) {
        g_message("audio: qemu before 8.0 crashes when its D-Bus audio is used "
                  "over a peer-to-peer connection, and this qemu is older than "
                  "8.1; no sound channel is offered to clients (attach through "
                  "a D-Bus bus, or use qemu 8.1 or later)");
        return;
    }
    out->peer = qs_p2p_peer_register(out->conn, out->dest, AUDIO_PATH, IFACE_AUDIO,
                                     "RegisterOutListener", "qs-audio-out", &peer_funcs, out,
                                     out->cancellable, on_registered, &error);
    if (!out->peer) {
        g_warning("audio: %s; no sound", error->message);
        return;
    }
    out->started = TRUE;
}

gboolean qs_audio_out_is_available(QsAudioOut *out)
{
    return out->available;
}

uint64_t qs_audio_out_get_dropped(QsAudioOut *out)
{
    return g_atomic_pointer_get(&out->dropped);
}

void qs_audio_out_free(QsAudioOut *out)
{
    if (!out) {
        return;
    }
    g_cancellable_cancel(out->cancellable);
    g_clear_pointer(&out->peer, qs_p2p_peer_free);
    g_source_destroy(out->wake);
    g_source_unref(out->wake);
    g_queue_clear_full(&out->events, (GDestroyNotify)event_free);
    g_mutex_clear(&out->lock);
    g_object_unref(out->cancellable);
    g_object_unref(out->conn);
    g_free(out->dest);
    g_free(out);
}
