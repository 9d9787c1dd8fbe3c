/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Connecting a spice-client-glib session, tracking its channels and bounded waiting. */
#include "qs-tc.h"

#include <stdarg.h>

void qs_tc_init(QsTc *tc)
{
    memset(tc, 0, sizeof(*tc));
    tc->timeout_s = 30;
    tc->channels = g_ptr_array_new_with_free_func(g_free);
    tc->link_error = -1;
    tc->margin_min = G_MAXINT;
    tc->margin_max = G_MININT;
}

static gboolean all_destroyed(QsTc *tc, gpointer data)
{
    (void)data;
    return tc->live_channels == 0;
}

void qs_tc_clear(QsTc *tc)
{
    if (tc->session) {
        tc->closing = TRUE;
        spice_session_disconnect(tc->session);
        /* let the channel coroutines unwind, so nothing is left on their
         * stacks (and a leak checker sees a clean exit); fail_status is
         * cleared because the wait stops early once it is set */
        tc->fail_status = 0;
        qs_tc_wait(tc, all_destroyed, NULL, G_USEC_PER_SEC);
        g_clear_object(&tc->session);
        /* the coroutines finish in idle callbacks after channel-destroy */
        for (int i = 0; i < 1000 && g_main_context_iteration(NULL, FALSE); i++)
            ;
    }
    g_clear_pointer(&tc->channels, g_ptr_array_unref);
    g_clear_object(&tc->control);
    g_clear_pointer(&tc->fail_msg, g_free);
    g_clear_pointer(&tc->last_warning, g_free);
    g_clear_pointer(&tc->video_codecs, g_array_unref);
}

void qs_tc_fail(QsTc *tc, int status, const char *fmt, ...)
{
    va_list ap;

    /* the first failure is the cause; later ones are usually its echo */
    if (tc->fail_status)
        return;
    tc->fail_status = status;
    va_start(ap, fmt);
    tc->fail_msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
}

const char *qs_tc_channel_name(int type)
{
    const char *name = spice_channel_type_to_string(type);

    return name ? name : "unknown";
}

const char *qs_tc_mouse_mode_name(int mode)
{
    switch (mode) {
    case SPICE_MOUSE_MODE_SERVER:
        return "server";
    case SPICE_MOUSE_MODE_CLIENT:
        return "client";
    default:
        return "unknown";
    }
}

int qs_tc_mouse_mode(QsTc *tc)
{
    int mode = 0;

    if (tc->main)
        g_object_get(tc->main, "mouse-mode", &mode, NULL);
    return mode;
}

static QsTcChannel *find_channel(QsTc *tc, SpiceChannel *channel)
{
    for (guint i = 0; i < tc->channels->len; i++) {
        QsTcChannel *c = g_ptr_array_index(tc->channels, i);
        if (c->channel == channel)
            return c;
    }
    return NULL;
}

static const char *event_name(SpiceChannelEvent event)
{
    switch (event) {
    case SPICE_CHANNEL_OPENED: return "SPICE_CHANNEL_OPENED";
    case SPICE_CHANNEL_SWITCHING: return "SPICE_CHANNEL_SWITCHING";
    case SPICE_CHANNEL_CLOSED: return "SPICE_CHANNEL_CLOSED";
    case SPICE_CHANNEL_ERROR_CONNECT: return "SPICE_CHANNEL_ERROR_CONNECT";
    case SPICE_CHANNEL_ERROR_TLS: return "SPICE_CHANNEL_ERROR_TLS";
    case SPICE_CHANNEL_ERROR_LINK: return "SPICE_CHANNEL_ERROR_LINK";
    case SPICE_CHANNEL_ERROR_AUTH: return "SPICE_CHANNEL_ERROR_AUTH";
    case SPICE_CHANNEL_ERROR_IO: return "SPICE_CHANNEL_ERROR_IO";
    default: return "SPICE_CHANNEL_NONE";
    }
}

static void on_channel_event(SpiceChannel *channel, SpiceChannelEvent event, gpointer data)
{
    QsTc *tc = data;
    QsTcChannel *c = find_channel(tc, channel);
    const GError *err = spice_channel_get_error(channel);
    const char *what = NULL, *link;
    int status = 0;
    gboolean essential;

    if (!c || tc->closing)
        return;
    c->event = event;
    if (tc->verbose)
        g_printerr("channel %s:%d: %s\n", qs_tc_channel_name(c->type), c->id, event_name(event));

    if (event == SPICE_CHANNEL_OPENED && c->type == SPICE_CHANNEL_DISPLAY && tc->video_codecs) {
        g_autoptr(GError) perr = NULL;

        /* Only once linked: spice-gtk checks the server's capability. */
        if (!spice_display_channel_change_preferred_video_codec_types(
                channel, (const gint *)tc->video_codecs->data, tc->video_codecs->len, &perr)) {
            qs_tc_fail(tc, QS_TC_EXIT_UNSUPPORTED, "preferred video codecs: %s", perr->message);
        }
        return;
    }
    switch (event) {
    case SPICE_CHANNEL_ERROR_CONNECT: what = "connect failed"; status = QS_TC_EXIT_CONNECT; break;
    case SPICE_CHANNEL_ERROR_TLS: what = "tls failed"; status = QS_TC_EXIT_TLS; break;
    case SPICE_CHANNEL_ERROR_LINK: what = "link failed"; status = QS_TC_EXIT_LINK; break;
    case SPICE_CHANNEL_ERROR_AUTH: what = "auth failed"; status = QS_TC_EXIT_AUTH; break;
    case SPICE_CHANNEL_ERROR_IO: what = "io error"; status = QS_TC_EXIT_IO; break;
    case SPICE_CHANNEL_CLOSED: what = "closed by server"; status = QS_TC_EXIT_IO; break;
    default: return;
    }

    /* audio or cursor trouble must not hide the display result */
    essential = c->type == SPICE_CHANNEL_MAIN || c->type == SPICE_CHANNEL_INPUTS ||
                (c->type == SPICE_CHANNEL_DISPLAY && c->id == 0);
    if (!essential) {
        g_printerr("warning: channel %s:%d: %s: %s\n", qs_tc_channel_name(c->type), c->id,
                   event_name(event), err ? err->message : "no error text");
        return;
    }
    link = tc->link_error >= 0 ? qs_tc_link_error_name(tc->link_error) : NULL;
    if (tc->link_error == SPICE_LINK_ERR_NEED_SECURED && event != SPICE_CHANNEL_ERROR_LINK) {
        /* spice-gtk answers NEED_SECURED by reconnecting on the TLS port; without
         * one that shows up as a connect error, but the cause is the link reply */
        if (!tc->have_tls_port) {
            what = "link failed";
            status = QS_TC_EXIT_LINK;
        } else {
            link = "after SPICE_LINK_ERR_NEED_SECURED";
        }
    }
    qs_tc_fail(tc, status, "%s%s%s (channel %s:%d, %s%s%s)%s%s", what,
               link ? ": " : "", link ? link : "",
               qs_tc_channel_name(c->type), c->id, event_name(event),
               err ? ": " : "", err ? err->message : "",
               tc->last_warning && !err ? "; spice-gtk: " : "",
               tc->last_warning && !err ? tc->last_warning : "");
}

static void on_primary_create(SpiceChannel *channel, gint format, gint width, gint height,
                              gint stride, gint shmid, gpointer imgdata, gpointer data)
{
    QsTc *tc = data;

    (void)channel; (void)stride; (void)shmid; (void)imgdata;
    tc->primary = TRUE;
    tc->primary_format = format;
    tc->primary_width = width;
    tc->primary_height = height;
    tc->last_invalidate_us = g_get_monotonic_time();
    if (tc->verbose)
        g_printerr("primary create %dx%d format %d stride %d\n", width, height, format, stride);
}

static void on_primary_destroy(SpiceChannel *channel, gpointer data)
{
    QsTc *tc = data;

    (void)channel;
    tc->primary = FALSE;
}

static void on_invalidate(SpiceChannel *channel, gint x, gint y, gint w, gint h, gpointer data)
{
    QsTc *tc = data;

    (void)channel;
    tc->n_invalidates++;
    if (w > 0 && h > 0)
        tc->invalidate_pixels += (guint64)w * (guint64)h;
    tc->last_invalidate_us = g_get_monotonic_time();
    if (tc->on_invalidate)
        tc->on_invalidate(tc, x, y, w, h, tc->on_invalidate_data);
}

static void on_mark(SpiceChannel *channel, gboolean mark, gpointer data)
{
    QsTc *tc = data;

    (void)channel;
    tc->mark = mark;
}

static void on_monitors(GObject *obj, GParamSpec *pspec, gpointer data)
{
    QsTc *tc = data;
    g_autoptr(GArray) monitors = NULL;

    (void)pspec;
    g_object_get(obj, "monitors", &monitors, NULL);
    /* spice-gtk synthesises one monitor itself when the server lacks the
     * cap, so only a non-empty list with the cap means MONITORS_CONFIG came */
    if (monitors && monitors->len > 0 &&
        spice_channel_test_capability(SPICE_CHANNEL(obj), SPICE_DISPLAY_CAP_MONITORS_CONFIG))
        tc->monitors_config = TRUE;
}

static void on_mouse_mode(GObject *obj, GParamSpec *pspec, gpointer data)
{
    QsTc *tc = data;

    (void)obj; (void)pspec;
    tc->mouse_mode_seen = TRUE;
}

static void on_channel_destroy(SpiceSession *session, SpiceChannel *channel, gpointer data)
{
    QsTc *tc = data;

    (void)session;
    (void)channel;
    if (tc->live_channels > 0)
        tc->live_channels--;
}

static void on_channel_new(SpiceSession *session, SpiceChannel *channel, gpointer data)
{
    QsTc *tc = data;
    QsTcChannel *c;
    int type = 0, id = 0;

    (void)session;
    tc->live_channels++;
    g_object_get(channel, "channel-type", &type, "channel-id", &id, NULL);
    switch (type) {
    case SPICE_CHANNEL_MAIN:
    case SPICE_CHANNEL_DISPLAY:
    case SPICE_CHANNEL_INPUTS:
    case SPICE_CHANNEL_CURSOR:
        break;
    case SPICE_CHANNEL_PLAYBACK:
    case SPICE_CHANNEL_RECORD:
        if (tc->want_audio)
            break;
        return;
    default:
        return;
    }

    c = g_new0(QsTcChannel, 1);
    c->channel = channel;
    c->type = type;
    c->id = id;
    g_ptr_array_add(tc->channels, c);
    g_signal_connect(channel, "channel-event", G_CALLBACK(on_channel_event), tc);
    qs_tc_add_client_watch(tc, channel);

    if (type == SPICE_CHANNEL_MAIN) {
        tc->main = SPICE_MAIN_CHANNEL(channel);
        g_signal_connect(channel, "notify::mouse-mode", G_CALLBACK(on_mouse_mode), tc);
        return;                 /* the session connects main itself */
    }
    if (type == SPICE_CHANNEL_DISPLAY && id == tc->display_id) {
        tc->display = channel;
        g_signal_connect(channel, "display-primary-create", G_CALLBACK(on_primary_create), tc);
        g_signal_connect(channel, "display-primary-destroy", G_CALLBACK(on_primary_destroy), tc);
        g_signal_connect(channel, "display-invalidate", G_CALLBACK(on_invalidate), tc);
        g_signal_connect(channel, "display-mark", G_CALLBACK(on_mark), tc);
        g_signal_connect(channel, "notify::monitors", G_CALLBACK(on_monitors), tc);
    }
    if (type == SPICE_CHANNEL_INPUTS)
        tc->inputs = SPICE_INPUTS_CHANNEL(channel);
    spice_channel_connect(channel);
}

gboolean qs_tc_connect(QsTc *tc, const char *host, const char *port, const char *tls_port,
                       const char *ca_file, const char *host_subject, const char *password,
                       const char *secure_channels)
{
    tc->session = spice_session_new();
    g_object_set(tc->session,
                 "enable-audio", tc->want_audio,
                 "enable-usbredir", FALSE,
                 "enable-smartcard", FALSE,
                 NULL);
    if (!tc->control)
        g_object_set(tc->session, "host", host, NULL);
    if (port)
        g_object_set(tc->session, "port", port, NULL);
    if (tls_port)
        g_object_set(tc->session, "tls-port", tls_port, NULL);
    tc->have_tls_port = tls_port != NULL;
    if (ca_file)
        g_object_set(tc->session, "ca-file", ca_file, NULL);
    if (host_subject)
        g_object_set(tc->session, "cert-subject", host_subject, NULL);
    if (password)
        g_object_set(tc->session, "password", password, NULL);
    if (secure_channels) {
        g_auto(GStrv) list = g_strsplit(secure_channels, ",", -1);
        g_object_set(tc->session, "secure-channels", list, NULL);
    }
    g_signal_connect(tc->session, "channel-new", G_CALLBACK(on_channel_new), tc);
    g_signal_connect(tc->session, "channel-destroy", G_CALLBACK(on_channel_destroy), tc);
    if (tc->control) {
        /* Every channel, main first, asks for its socket (open-fd). */
        if (!spice_session_open_fd(tc->session, -1)) {
            qs_tc_fail(tc, QS_TC_EXIT_CONNECT, "spice_session_open_fd refused");
            return FALSE;
        }
        return TRUE;
    }
    if (!spice_session_connect(tc->session)) {
        qs_tc_fail(tc, QS_TC_EXIT_CONNECT, "connect failed: spice_session_connect refused the parameters");
        return FALSE;
    }
    return TRUE;
}

static gboolean on_wake(gpointer data)
{
    *(gboolean *)data = TRUE;
    return G_SOURCE_REMOVE;
}

gboolean qs_tc_wait(QsTc *tc, QsTcCond cond, gpointer data, gint64 timeout_us)
{
    gint64 deadline = g_get_monotonic_time() + timeout_us;

    while (!tc->fail_status) {
        gboolean fired = FALSE;
        gint64 now;
        guint id;

        if (cond && cond(tc, data))
            return TRUE;
        now = g_get_monotonic_time();
        if (now >= deadline)
            return cond == NULL;
        id = g_timeout_add((guint)MAX(1, (deadline - now + 999) / 1000), on_wake, &fired);
        g_main_context_iteration(NULL, TRUE);
        if (!fired)
            g_source_remove(id);
    }
    return FALSE;
}

static gboolean ready_cond(QsTc *tc, gpointer data)
{
    (void)data;
    if (!tc->primary || !tc->inputs || !tc->mouse_mode_seen)
        return FALSE;
    for (guint i = 0; i < tc->channels->len; i++) {
        QsTcChannel *c = g_ptr_array_index(tc->channels, i);
        if (c->event == 0)
            return FALSE;
    }
    return TRUE;
}

static gboolean mark_cond(QsTc *tc, gpointer data)
{
    (void)data;
    return tc->mark;
}

gboolean qs_tc_wait_ready(QsTc *tc)
{
    if (qs_tc_wait(tc, ready_cond, NULL, (gint64)tc->timeout_s * G_USEC_PER_SEC)) {
        /* spice-server sends MARK after the first full picture; waiting for it
         * keeps that picture's arrival out of every measurement. Bounded and
         * not required: "info" reports whether it came. */
        qs_tc_wait(tc, mark_cond, NULL, MIN((gint64)tc->timeout_s, 3) * G_USEC_PER_SEC);
        return !tc->fail_status;
    }
    if (!tc->fail_status)
        qs_tc_fail(tc, QS_TC_EXIT_TIMEOUT,
                   "timeout: not ready after %d s (main %s, primary surface %s, inputs %s, mouse mode %s)",
                   tc->timeout_s, tc->main ? "yes" : "no", tc->primary ? "yes" : "no",
                   tc->inputs ? "yes" : "no", tc->mouse_mode_seen ? "yes" : "no");
    return FALSE;
}

typedef struct {
    gboolean done;
    gboolean ok;
} FlushState;

static void on_flushed(GObject *obj, GAsyncResult *res, gpointer data)
{
    FlushState *st = data;

    st->ok = spice_channel_flush_finish(SPICE_CHANNEL(obj), res, NULL);
    st->done = TRUE;
}

static gboolean flush_cond(QsTc *tc, gpointer data)
{
    (void)tc;
    return ((FlushState *)data)->done;
}

/* Input is queued in spice-gtk; exiting before it is written would lose it. */
gboolean qs_tc_flush(QsTc *tc, SpiceChannel *channel)
{
    FlushState *st = g_new0(FlushState, 1);
    gboolean ok;

    spice_channel_flush_async(channel, NULL, on_flushed, st);
    if (!qs_tc_wait(tc, flush_cond, st, (gint64)tc->timeout_s * G_USEC_PER_SEC)) {
        /* the callback may still run later: leak st rather than free it under it */
        if (!tc->fail_status)
            qs_tc_fail(tc, QS_TC_EXIT_TIMEOUT, "timeout: flushing a channel did not finish");
        return FALSE;
    }
    ok = st->ok;
    g_free(st);
    return ok;
}
