/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsAudioListener: an audio listener's registration, peer thread and event queue, for either direction. */
#include "display/qs-audio-listener.h"

#include "display/qs-p2p-peer.h"
#include "util/qs-wake.h"
#include "qs-dbus-display1.h"

#define AUDIO_PATH "/org/qemu/Display1/Audio"
#define IFACE_AUDIO "org.qemu.Display1.Audio"
#define MAX_FREQ 192000u
#define MIN_FREQ 1000u

typedef struct {
    const char *method;         /* on qemu's Audio */
    const char *path;           /* where our object is exported */
    const char *thread_name;    /* the peer thread's; the wake source adds "-wake" */
    /* The words of its log lines: qemu refused our `what`, so `refused`;
     * qemu closed the `what` connection, so `lost`; could not register,
     * so `failed`; registered: `registered` (NULL: no line). */
    const char *what, *refused, *lost, *failed, *registered;
    const char *voice;          /* qemu's Init for this `voice` is refused */
    GType (*skeleton_type)(void);   /* our object's generated skeleton */
    const char *call;           /* its signal for the direction's own call */
} Direction;

/* In the order of Direction's fields. */
static const Direction directions[] = {
    [QS_AUDIO_OUT_LISTENER] = {
        "RegisterOutListener", "/org/qemu/Display1/AudioOutListener", "qs-audio-out",
        "audio listener", "no sound channel is offered to clients",
        "no more sound for clients", "no sound",
        "registered with qemu's D-Bus audio: sound is offered to clients", "voice",
        qemu_dbus_display1_audio_out_listener_skeleton_get_type, "handle-write" },
    [QS_AUDIO_IN_LISTENER] = {
        "RegisterInListener", "/org/qemu/Display1/AudioInListener", "qs-audio-in",
        "capture listener", "no record channel is offered to clients",
        "no more recording", "no recording", NULL, "capture voice",
        qemu_dbus_display1_audio_in_listener_skeleton_get_type, "handle-read" },
};

typedef struct {
    QsAudioEvent head;
    char *message;
} ClosedEvent;

struct QsAudioListener {
    const Direction *dir;
    const QsAudioListenerClass *klass;
    gpointer data;
    gconstpointer funcs;            /* the owner's, for `deliver` */
    QsAudioAvailableFunc available_func;
    gpointer user_data;
    GDBusConnection *conn;          /* main connection to qemu */
    char *dest;
    GCancellable *cancellable;
    gboolean started, available, refused;
    gboolean settled;               /* the owner has heard qemu's first answer */
    GSource *wake;                  /* main context */

    /* Shared with the peer thread. */
    GMutex lock;
    GQueue events;

    /* The peer thread. */
    QsP2pPeer *peer;
    GDBusInterfaceSkeleton *skel;
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

static void event_free(QsAudioListener *l, QsAudioEvent *e)
{
    if (e->kind >= QS_AUDIO_EVENT_OWN) {
        l->klass->event_free(e);
        return;
    }
    if (e->kind == QS_AUDIO_EVENT_CLOSED) {
        g_free(((ClosedEvent *)e)->message);
    }
    g_free(e);
}

void qs_audio_listener_lock(QsAudioListener *l)
{
    g_mutex_lock(&l->lock);
}

void qs_audio_listener_unlock(QsAudioListener *l)
{
    g_mutex_unlock(&l->lock);
}

GQueue *qs_audio_listener_queue_locked(QsAudioListener *l)
{
    return &l->events;
}

void qs_audio_listener_post_locked(QsAudioListener *l, QsAudioEvent *e)
{
    g_queue_push_tail(&l->events, e);
    qs_wake(l->wake);
}

void qs_audio_listener_post(QsAudioListener *l, QsAudioEvent *e)
{
    g_mutex_lock(&l->lock);
    qs_audio_listener_post_locked(l, e);
    g_mutex_unlock(&l->lock);
}

/* ---- peer thread ----------------------------------------------------------- */

/* qemu's calls to either listener; each is answered after the work, so
 * qemu's next call (or a test) finds it done. */
static gboolean on_init(GDBusInterfaceSkeleton *skel, GDBusMethodInvocation *inv,
                        guint64 id, guchar bits, gboolean is_signed,
                        gboolean is_float, guint freq, guchar nchannels,
                        guint bytes_per_frame, guint bytes_per_second,
                        gboolean be, gpointer data)
{
    QsAudioListener *l = data;
    g_autoptr(GError) error = NULL;
    QsAudioFormat format = {
        .bits = bits, .is_signed = is_signed, .is_float = is_float, .be = be,
        .freq = freq, .nchannels = nchannels, .bytes_per_frame = bytes_per_frame,
        .bytes_per_second = bytes_per_second,
    };

    (void)skel;
    if (!qs_audio_format_check(&format, &error)) {
        g_warning("audio: %s %" G_GUINT64_FORMAT " ignored: %s", l->dir->voice, id,
                  error->message);
    } else {
        l->klass->init(id, &format, l->data);
    }
    g_dbus_method_invocation_return_value(inv, g_variant_new("()"));
    return TRUE;
}

static gboolean on_fini(GDBusInterfaceSkeleton *skel, GDBusMethodInvocation *inv,
                        guint64 id, gpointer data)
{
    QsAudioListener *l = data;

    (void)skel;
    l->klass->fini(id, l->data);
    g_dbus_method_invocation_return_value(inv, g_variant_new("()"));
    return TRUE;
}

static gboolean on_set_enabled(GDBusInterfaceSkeleton *skel,
                               GDBusMethodInvocation *inv, guint64 id,
                               gboolean enabled, gpointer data)
{
    QsAudioListener *l = data;

    (void)skel;
    l->klass->enabled(id, enabled, l->data);
    g_dbus_method_invocation_return_value(inv, g_variant_new("()"));
    return TRUE;
}

static gboolean on_set_volume(GDBusInterfaceSkeleton *skel,
                              GDBusMethodInvocation *inv, guint64 id,
                              gboolean mute, GVariant *volume, gpointer data)
{
    QsAudioListener *l = data;
    gsize n = 0;
    const uint8_t *v = g_variant_get_fixed_array(volume, &n, 1);

    (void)skel;
    l->klass->volume(id, mute, v, n, l->data);
    g_dbus_method_invocation_return_value(inv, g_variant_new("()"));
    return TRUE;
}

/* qemu's connection ended or could not be made. */
static void on_peer_closed(const char *why, gpointer data)
{
    QsAudioListener *l = data;
    ClosedEvent *e = g_new0(ClosedEvent, 1);

    e->head.kind = QS_AUDIO_EVENT_CLOSED;
    e->message = g_strdup(why ? why : "closed");
    qs_audio_listener_post(l, &e->head);
}

static gboolean on_peer_export(GDBusConnection *conn, gpointer data, GError **error)
{
    static const char *const no_ifaces[] = { NULL };
    QsAudioListener *l = data;
    QsAudioEvent *ready;

    l->skel = g_object_new(l->dir->skeleton_type(), "interfaces", no_ifaces, NULL);
    g_signal_connect(l->skel, l->dir->call, l->klass->call, l->data);
    g_object_connect(l->skel,
        "signal::handle-init", on_init, l,
        "signal::handle-fini", on_fini, l,
        "signal::handle-set-enabled", on_set_enabled, l,
        "signal::handle-set-volume", on_set_volume, l,
        NULL);
    if (!g_dbus_interface_skeleton_export(l->skel, conn, l->dir->path, error)) {
        return FALSE;
    }
    /* Before qemu's first call can be read: ahead of it in the queue. */
    ready = g_new0(QsAudioEvent, 1);
    ready->kind = QS_AUDIO_EVENT_READY;
    qs_audio_listener_post(l, ready);
    return TRUE;
}

static void on_peer_unexport(gpointer data)
{
    QsAudioListener *l = data;

    if (l->skel) {
        g_dbus_interface_skeleton_unexport(l->skel);
        g_signal_handlers_disconnect_by_data(l->skel, l);
        g_signal_handlers_disconnect_by_data(l->skel, l->data);
        g_clear_object(&l->skel);
    }
}

static const QsP2pPeerFuncs peer_funcs = {
    .export = on_peer_export,
    .unexport = on_peer_unexport,
    .closed = on_peer_closed,
};

/* ---- main context ---------------------------------------------------------- */

static void set_available(QsAudioListener *l, gboolean available)
{
    /* The first answer is passed on even when it is "not available" (qemu
     * refused): the owner may be holding clients until it knows. */
    if (l->settled && l->available == available) {
        return;
    }
    l->settled = TRUE;
    l->available = available;
    if (available && l->dir->registered) {
        g_message("audio: %s", l->dir->registered);
    }
    if (l->available_func) {
        l->available_func(available, l->user_data);
    }
}

static void deliver(QsAudioListener *l, const QsAudioEvent *e)
{
    switch (e->kind) {
    case QS_AUDIO_EVENT_READY:
        /* qemu opens the listener connection only after accepting the
         * registration; its reply may come later (over a bus, through the
         * bus daemon) than its first calls here, which must not be lost. */
        if (!l->refused) {
            set_available(l, TRUE);
        }
        return;
    case QS_AUDIO_EVENT_CLOSED:
        if (l->available) {
            g_warning("audio: qemu closed the %s connection (%s): %s", l->dir->what,
                      ((const ClosedEvent *)e)->message, l->dir->lost);
        }
        set_available(l, FALSE);
        return;
    default:
        break;
    }
    if (l->available && l->funcs) {
        l->klass->deliver(e, l->funcs, l->user_data);
    }
}

static gboolean on_wake(gpointer data)
{
    QsAudioListener *l = data;
    GQueue events;
    QsAudioEvent *e;

    g_mutex_lock(&l->lock);
    events = l->events;
    g_queue_init(&l->events);
    for (GList *i = events.head; i && l->klass->taken; i = i->next) {
        e = i->data;
        if (e->kind >= QS_AUDIO_EVENT_OWN) {
            l->klass->taken(e, l->data);
        }
    }
    g_mutex_unlock(&l->lock);
    while ((e = g_queue_pop_head(&events))) {
        deliver(l, e);
        event_free(l, e);
    }
    return G_SOURCE_CONTINUE;
}

static void on_registered(const GError *error, const char *remote, gpointer data)
{
    QsAudioListener *l = data;

    if (error) {
        l->refused = TRUE;
        g_message("audio: qemu refused our %s%s%s; %s (%s)", l->dir->what,
                  remote ? ": " : "", remote ? remote : "", l->dir->refused,
                  error->message);
    }
    set_available(l, error == NULL);
}

QsAudioListener *qs_audio_listener_new(GDBusConnection *conn, const char *dest,
                                       QsAudioDirection direction,
                                       const QsAudioListenerClass *klass,
                                       gpointer data)
{
    QsAudioListener *l = g_new0(QsAudioListener, 1);
    g_autoptr(GMainContext) main_ctx = g_main_context_ref_thread_default();
    g_autofree char *wake_name = g_strconcat(directions[direction].thread_name, "-wake", NULL);

    l->dir = &directions[direction];
    l->klass = klass;
    l->data = data;
    l->conn = g_object_ref(conn);
    l->dest = g_strdup(dest);
    l->cancellable = g_cancellable_new();
    g_mutex_init(&l->lock);
    g_queue_init(&l->events);
    l->wake = qs_wake_source_new(wake_name, on_wake, l, main_ctx);
    return l;
}

gboolean qs_audio_listener_start(QsAudioListener *l)
{
    g_autoptr(GError) error = NULL;

    if (l->started) {
        return !l->settled;
    }
    l->peer = qs_p2p_peer_register(l->conn, l->dest, AUDIO_PATH, IFACE_AUDIO,
                                   l->dir->method, l->dir->thread_name,
                                   &peer_funcs, l, l->cancellable, on_registered,
                                   &error);
    if (!l->peer) {
        g_warning("audio: %s; %s", error->message, l->dir->failed);
        return FALSE;
    }
    l->started = TRUE;
    return !l->settled;
}

void qs_audio_listener_set_funcs(QsAudioListener *l, gconstpointer funcs,
                                 QsAudioAvailableFunc available, gpointer user_data)
{
    l->funcs = funcs;
    l->available_func = available;
    l->user_data = user_data;
}

gboolean qs_audio_listener_is_available(QsAudioListener *l)
{
    return l->available;
}

void qs_audio_listener_retire(QsAudioListener *l)
{
    g_cancellable_cancel(l->cancellable);
    g_clear_pointer(&l->peer, qs_p2p_peer_free);
}

void qs_audio_listener_free(QsAudioListener *l)
{
    QsAudioEvent *e;

    if (!l) {
        return;
    }
    qs_audio_listener_retire(l);
    g_source_destroy(l->wake);
    g_source_unref(l->wake);
    while ((e = g_queue_pop_head(&l->events))) {
        event_free(l, e);
    }
    g_mutex_clear(&l->lock);
    g_object_unref(l->cancellable);
    g_object_unref(l->conn);
    g_free(l->dest);
    g_free(l);
}
