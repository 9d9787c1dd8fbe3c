/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Our AudioOutListener: registration with qemu, its p2p connection on a thread, a bounded queue to the main context. */
#include "display/qs-audio-out.h"

#include <string.h>

#include "display/qs-audio-listener.h"
#include "qs-dbus-display1.h"


typedef enum {
    EV_INIT = QS_AUDIO_EVENT_OWN,
    EV_FINI,
    EV_ENABLED,
    EV_VOLUME,
    EV_WRITE,
} EventKind;

typedef struct {
    QsAudioEvent head;
    uint64_t id;
    QsAudioFormat format;           /* EV_INIT */
    gboolean flag;                  /* EV_ENABLED, EV_VOLUME (mute) */
    uint8_t volume[QS_AUDIO_MAX_CHANNELS];
    guint n_volume;
    GBytes *pcm;                    /* EV_WRITE */
} Event;

/* A voice as the listener thread knows it, to bound what waits. */
typedef struct {
    gboolean used;
    uint64_t id;
    uint32_t bytes_per_frame;
    uint64_t max_queued;            /* QS_AUDIO_MAX_QUEUE_MS of it */
    uint64_t queued;                /* PCM bytes in the listener's queue */
} Voice;

struct QsAudioOut {
    QsAudioListener *listener;

    /* Shared with the listener thread, under the listener's lock. */
    Voice voices[QS_AUDIO_MAX_VOICES];
    guint64 dropped;                /* atomic */
};

static void event_free(QsAudioEvent *head)
{
    Event *e = (Event *)head;

    if (e->pcm) {
        g_bytes_unref(e->pcm);
    }
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
    GQueue *events = qs_audio_listener_queue_locked(out->listener);
    GList *l = events->head;

    while (l && v->queued > v->max_queued) {
        GList *next = l->next;
        Event *e = l->data;

        if (e->head.kind == EV_WRITE && e->id == v->id) {
            v->queued -= g_bytes_get_size(e->pcm);
            g_queue_delete_link(events, l);
            event_free(&e->head);
            g_atomic_pointer_add(&out->dropped, 1);
        }
        l = next;
    }
}

/* With the lock held: the voice's budget, or FALSE when there is no room
 * for another voice. */
static gboolean voice_init(QsAudioOut *out, const Event *e)
{
    Voice *v = find_voice(out, e->id);

    for (guint i = 0; !v && i < QS_AUDIO_MAX_VOICES; i++) {
        if (!out->voices[i].used) {
            v = &out->voices[i];
            *v = (Voice){ .used = TRUE, .id = e->id };
        }
    }
    if (!v) {
        return FALSE;
    }
    v->bytes_per_frame = e->format.bytes_per_frame;
    v->max_queued = (uint64_t)e->format.bytes_per_second * QS_AUDIO_MAX_QUEUE_MS / 1000;
    return TRUE;
}

/* With the lock held: whole frames of the Write queued, within the voice's
 * budget (its oldest PCM dropped), or FALSE to drop it all. */
static gboolean queue_write(QsAudioOut *out, Event *e)
{
    Voice *v = find_voice(out, e->id);
    gsize size = g_bytes_get_size(e->pcm);
    gsize whole = v ? size - size % v->bytes_per_frame : 0;
    gsize keep = whole;

    if (!v || whole == 0) {
        /* No Init (or a refused format) before it, or not one frame. */
        return FALSE;
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
    qs_audio_listener_post_locked(out->listener, &e->head);
    drop_oldest(out, v);
    return TRUE;
}

/* Listener thread -> main context, in order. */
static void post(QsAudioOut *out, Event *e)
{
    qs_audio_listener_lock(out->listener);
    if (e->head.kind == EV_INIT && !voice_init(out, e)) {
        qs_audio_listener_unlock(out->listener);
        g_warning("audio: qemu has more than %u output voices; voice %"
                  G_GUINT64_FORMAT " ignored", QS_AUDIO_MAX_VOICES, e->id);
        event_free(&e->head);
        return;
    }
    if (e->head.kind == EV_WRITE) {
        if (!queue_write(out, e)) {
            g_atomic_pointer_add(&out->dropped, 1);
            event_free(&e->head);
        }
        qs_audio_listener_unlock(out->listener);
        return;
    }
    if (e->head.kind == EV_FINI) {
        Voice *v = find_voice(out, e->id);

        /* qemu may reuse the id with a new Init; what is queued still
         * plays, no longer counted. */
        if (v) {
            v->used = FALSE;
        }
    }
    qs_audio_listener_post_locked(out->listener, &e->head);
    qs_audio_listener_unlock(out->listener);
}

static Event *event_new(EventKind kind, uint64_t id)
{
    Event *e = g_new0(Event, 1);

    e->head.kind = kind;
    e->id = id;
    return e;
}

static void post_init(uint64_t id, const QsAudioFormat *format, gpointer data)
{
    Event *e = event_new(EV_INIT, id);

    e->format = *format;
    post(data, e);
}

static void post_fini(uint64_t id, gpointer data)
{
    post(data, event_new(EV_FINI, id));
}

static void post_enabled(uint64_t id, gboolean enabled, gpointer data)
{
    Event *e = event_new(EV_ENABLED, id);

    e->flag = enabled;
    post(data, e);
}

static void post_volume(uint64_t id, gboolean mute, const uint8_t *volume, gsize n,
                      gpointer data)
{
    Event *e = event_new(EV_VOLUME, id);

    e->flag = mute;
    e->n_volume = (guint)MIN(n, (gsize)QS_AUDIO_MAX_CHANNELS);
    if (e->n_volume) {
        memcpy(e->volume, volume, e->n_volume);
    }
    post(data, e);
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

/* ---- main context ---------------------------------------------------------- */

static void deliver(const QsAudioEvent *head, gconstpointer funcs, gpointer user_data)
{
    const QsAudioOutFuncs *f = funcs;
    const Event *e = (const Event *)head;

    switch ((EventKind)head->kind) {
    case EV_INIT:
        f->init(e->id, &e->format, user_data);
        break;
    case EV_FINI:
        f->fini(e->id, user_data);
        break;
    case EV_ENABLED:
        f->enabled(e->id, e->flag, user_data);
        break;
    case EV_VOLUME:
        f->volume(e->id, e->flag, e->volume, e->n_volume, user_data);
        break;
    case EV_WRITE:
        f->write(e->id, e->pcm, user_data);
        break;
    }
}

/* With the lock held: PCM leaving the queue no longer counts against its
 * voice's budget. */
static void taken(const QsAudioEvent *head, gpointer data)
{
    const Event *e = (const Event *)head;
    Voice *v = head->kind == EV_WRITE ? find_voice(data, e->id) : NULL;

    if (v) {
        v->queued -= MIN(v->queued, g_bytes_get_size(e->pcm));
    }
}

static const QsAudioListenerClass listener_class = {
    .init = post_init,
    .fini = post_fini,
    .enabled = post_enabled,
    .volume = post_volume,
    .call = G_CALLBACK(on_write),
    .deliver = deliver,
    .event_free = event_free,
    .taken = taken,
};

QsAudioOut *qs_audio_out_new(GDBusConnection *conn, const char *dest)
{
    QsAudioOut *out = g_new0(QsAudioOut, 1);

    out->listener = qs_audio_listener_new(conn, dest, QS_AUDIO_OUT_LISTENER, &listener_class, out);
    return out;
}

void qs_audio_out_free(QsAudioOut *out)
{
    if (!out) {
        return;
    }
    /* Not g_clear_pointer: the peer thread's handlers use out->listener
     * until the free has joined it. */
    qs_audio_listener_free(out->listener);
    g_free(out);
}

void qs_audio_out_set_funcs(QsAudioOut *out, const QsAudioOutFuncs *funcs,
                            gpointer user_data)
{
    qs_audio_listener_set_funcs(out->listener, funcs, funcs ? funcs->available : NULL,
                                user_data);
}

gboolean qs_audio_out_start(QsAudioOut *out, QsDisplayAudio audio)
{
    if (audio == QS_DISPLAY_AUDIO_NONE) {
        g_message("audio: qemu has no D-Bus audio (it needs -audiodev dbus,id=ID "
                  "and -display dbus,...,audiodev=ID); no sound channel is "
                  "offered to clients");
        return FALSE;
    }
    if (audio == QS_DISPLAY_AUDIO_P2P_UNSAFE) {
        g_message("audio: qemu before 8.0 crashes when its D-Bus audio is used "
                  "over a peer-to-peer connection, and this qemu is older than "
                  "8.1; no sound channel is offered to clients (attach through "
                  "a D-Bus bus, or use qemu 8.1 or later)");
        return FALSE;
    }
    return qs_audio_listener_start(out->listener);
}

gboolean qs_audio_out_is_available(QsAudioOut *out)
{
    return qs_audio_listener_is_available(out->listener);
}

uint64_t qs_audio_out_get_dropped(QsAudioOut *out)
{
    return g_atomic_pointer_get(&out->dropped);
}
