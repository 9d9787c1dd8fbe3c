/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A console's listener lifecycle: register, watch for lag, re-register. */

#include "display/qs-console.h"

#include <errno.h>
#include <gio/gunixfdlist.h>
#include <sys/socket.h>
#include <unistd.h>

#include "display/qs-console-sink.h"
#include "display/qs-listener.h"
#include "display/qs-watchdog.h"
#include "qs-dbus-display1.h"

/* On qemu 7.x-9.1 a p2p listener is kept under one key per console and the
 * old connection's hang-up removes whatever is kept there: give qemu time to
 * see the old one go before the new one arrives. */
#define REREGISTER_DELAY_MS 250
#define BACKOFF_MAX_MS 30000
/* A listener that lived this long resets the back-off. */
#define HEALTHY_US (10 * G_USEC_PER_SEC)

struct QsConsole {
    uint32_t id;
    char *path;
    QemuDBusDisplay1Console *proxy;
    QsInput *input;
    QsConsoleSink sink;

    QsListener *current;
    GPtrArray *retired;             /* QsListener, threads finishing */
    uint64_t next_id;
    int64_t current_since_us;
    gboolean present;
    gboolean stopped;

    QsWatchdog watchdog;
    gboolean watchdog_enabled;
    GSource *watchdog_source;       /* runs at its ready time */
    uint64_t watchdog_progress;     /* the listener's, at the last check */
    guint retry_source;
    char *lost_why;                 /* said when the retry runs */
    guint backoff_ms;
    GCancellable *cancellable;

    QsConsoleStats stats;           /* registrations, resets, losses */
    QsListenerStats past;           /* totals of retired listeners */
};

static void schedule_register(QsConsole *console, guint delay_ms);

/* A listener may still hold the source (and wake it): destroyed here, it
 * never runs again. */
static void stop_watchdog(QsConsole *console)
{
    if (console->watchdog_source) {
        g_source_destroy(console->watchdog_source);
        g_clear_pointer(&console->watchdog_source, g_source_unref);
    }
}

static void add_stats(QsListenerStats *sum, QsListener *l)
{
    QsListenerStats s;

    qs_listener_get_stats(l, &s);
    sum->scanouts += s.scanouts;
    sum->updates += s.updates;
    sum->scanout_maps += s.scanout_maps;
    sum->update_maps += s.update_maps;
    sum->dropped += s.dropped;
    sum->early += s.early;
}

static void reap(QsConsole *console)
{
    for (guint i = 0; i < console->retired->len;) {
        QsListener *l = console->retired->pdata[i];

        if (qs_listener_finished(l)) {
            g_ptr_array_remove_index_fast(console->retired, i);
            qs_listener_free(l);
        } else {
            i++;
        }
    }
}

static void retire_current(QsConsole *console)
{
    if (!console->current) {
        return;
    }
    add_stats(&console->past, console->current);
    qs_listener_retire(console->current);
    g_ptr_array_add(console->retired, g_steal_pointer(&console->current));
}

/* After a failure: retry later, later each time. */
static void lost(QsConsole *console, const char *why)
{
    guint delay = console->backoff_ms;

    if (g_get_monotonic_time() - console->current_since_us > HEALTHY_US) {
        delay = REREGISTER_DELAY_MS;
    }
    /* Said only when the retry runs: qemu's death closes the listener's
     * connection too, often before the main one, and a helper about to exit
     * must not announce a retry (qs_console_stop() cancels it). */
    g_free(console->lost_why);
    console->lost_why = g_strdup_printf("%s; registering a new listener "
                                        "after %u ms", why, delay);
    retire_current(console);
    console->backoff_ms = MIN(MAX(delay, REREGISTER_DELAY_MS) * 2,
                              BACKOFF_MAX_MS);
    schedule_register(console, delay);
}

static void on_listener_event(uint64_t id, QsListenerEvent event,
                              const char *message, gpointer data)
{
    QsConsole *console = data;
    g_autofree char *why = NULL;

    reap(console);
    if (console->stopped || !console->current ||
        qs_listener_get_id(console->current) != id) {
        return;     /* from a listener we already retired */
    }
    switch (event) {
    case QS_LISTENER_READY:
        g_debug("%s: listener %" G_GUINT64_FORMAT " connected",
                console->sink.name, id);
        break;
    case QS_LISTENER_FAILED:
        why = g_strdup_printf("listener handshake failed: %s",
                              message ? message : "unknown error");
        lost(console, why);
        break;
    case QS_LISTENER_CLOSED:
        /* qemu dropped it: replaced by another p2p client on qemu < 9.2,
         * or the console is going away. */
        console->stats.listener_losses++;
        why = g_strdup_printf("qemu closed the listener connection%s%s",
                              message ? ": " : "", message ? message : "");
        lost(console, why);
        break;
    }
}

typedef struct {
    QsConsole *console;
    uint64_t id;
} Pending;

static void on_registered(GObject *source, GAsyncResult *res, gpointer data)
{
    g_autofree Pending *p = data;
    g_autoptr(GError) error = NULL;
    g_autofree char *why = NULL;

    if (!qemu_dbus_display1_console_call_register_listener_finish(
            QEMU_DBUS_DISPLAY1_CONSOLE(source), NULL, res, &error)) {
        if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
            return;     /* before touching p->console: it may be gone */
        }
        if (p->console->stopped || !p->console->current ||
            qs_listener_get_id(p->console->current) != p->id) {
            return;
        }
        why = g_strdup_printf("RegisterListener failed: %s", error->message);
        lost(p->console, why);
    }
}

static void register_listener(QsConsole *console)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GUnixFDList) fds = NULL;
    Pending *p;
    int pair[2];

    reap(console);
    if (!console->present || console->stopped) {
        return;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0) {
        g_autofree char *why = g_strdup_printf("socketpair failed: %s",
                                               g_strerror(errno));
        lost(console, why);
        return;
    }
    fds = g_unix_fd_list_new_from_array(&pair[1], 1);
    console->current = qs_listener_start(&console->sink, ++console->next_id,
                                         pair[0], g_main_context_default(),
                                         console->watchdog_source,
                                         on_listener_event, console, &error);
    if (!console->current) {
        g_autofree char *why = g_strdup_printf("cannot start a listener: %s",
                                               error->message);
        lost(console, why);
        return;
    }
    console->current_since_us = g_get_monotonic_time();
    console->watchdog_progress = 0;
    qs_watchdog_init(&console->watchdog, QS_WATCHDOG_STALL_US,
                     QS_WATCHDOG_MAX_BACKLOG);
    console->stats.registrations++;
    p = g_new0(Pending, 1);
    p->console = console;
    p->id = console->next_id;
    qemu_dbus_display1_console_call_register_listener(
        console->proxy, g_variant_new_handle(0), fds, console->cancellable,
        on_registered, p);
}

static gboolean on_retry(gpointer data)
{
    QsConsole *console = data;

    console->retry_source = 0;
    if (console->lost_why) {
        g_warning("%s: %s", console->sink.name, console->lost_why);
        g_clear_pointer(&console->lost_why, g_free);
    }
    register_listener(console);
    return G_SOURCE_REMOVE;
}

static void schedule_register(QsConsole *console, guint delay_ms)
{
    g_clear_handle_id(&console->retry_source, g_source_remove);
    console->retry_source = g_timeout_add(delay_ms, on_retry, console);
}

/* The next check: in QS_WATCHDOG_PERIOD_MS; when `quiet`, at the next
 * message's arrival or in QS_WATCHDOG_IDLE_MS, whichever comes first. */
static void watchdog_next(QsConsole *console, gboolean quiet)
{
    int64_t now = g_get_monotonic_time();

    if (quiet && console->current) {
        /* The ready time before arming: an arrival's wake, which may come
         * as soon as we arm, must not be overwritten. */
        g_source_set_ready_time(console->watchdog_source,
                                now + QS_WATCHDOG_IDLE_MS * 1000);
        if (qs_listener_arm_wake(console->current)) {
            qs_listener_trim(console->current);
            return;
        }
    }
    g_source_set_ready_time(console->watchdog_source,
                            now + QS_WATCHDOG_PERIOD_MS * 1000);
}

static gboolean on_watchdog(gpointer data)
{
    QsConsole *console = data;
    QsListener *l = console->current;
    QsWatchdogVerdict v;
    uint64_t queued, unread, backlog, progress;

    reap(console);
    if (!l) {
        watchdog_next(console, TRUE);
        return G_SOURCE_CONTINUE;
    }
    qs_listener_disarm_wake(l);
    progress = qs_listener_get_progress(l);
    qs_listener_get_backlog(l, &queued, &unread);
    backlog = queued + unread;
    console->stats.backlog = backlog;
    /* From qemu's size properties, not the sink: its lock may be held by a
     * stuck listener, and this must never wait. */
    console->watchdog.max_backlog = MAX(
        QS_WATCHDOG_MAX_BACKLOG,
        3 * (uint64_t)qemu_dbus_display1_console_get_width(console->proxy) *
            qemu_dbus_display1_console_get_height(console->proxy) * 4);
    v = qs_watchdog_check(&console->watchdog, g_get_monotonic_time(),
                          progress, queued, unread, qs_listener_take_emptied(l));
    if (unread) {
        qs_listener_probe_emptying(l);
    }
    if (backlog) {
        g_debug("%s: watchdog: %" G_GUINT64_FORMAT " bytes queued, %"
                G_GUINT64_FORMAT " unread", console->sink.name, queued, unread);
    }
    if (v != QS_WATCHDOG_OK && console->watchdog_enabled) {
        g_warning("%s: listener %s (%" G_GUINT64_FORMAT " bytes waiting): "
                  "dropping it and registering a new one", console->sink.name,
                  qs_watchdog_verdict_str(v), backlog);
        console->stats.watchdog_resets++;
        retire_current(console);
        schedule_register(console, REREGISTER_DELAY_MS);
    }
    /* Quiet: nothing waits and nothing was handled since the last check,
     * so qemu sent nothing for a whole period (a busy guest keeps the
     * periodic checks, an idle one sleeps). */
    watchdog_next(console, backlog == 0 && progress == console->watchdog_progress);
    console->watchdog_progress = progress;
    return G_SOURCE_CONTINUE;
}

static gboolean watchdog_dispatch(GSource *source, GSourceFunc callback,
                                  gpointer user_data)
{
    (void)source;
    return callback(user_data);
}

static GSourceFuncs watchdog_funcs = {
    .dispatch = watchdog_dispatch,
};

static void on_size(GObject *obj, GParamSpec *pspec, gpointer data)
{
    QsConsole *console = data;
    QsConsoleSink *sink = &console->sink;
    uint32_t w = qemu_dbus_display1_console_get_width(console->proxy);
    uint32_t h = qemu_dbus_display1_console_get_height(console->proxy);
    g_autoptr(GError) error = NULL;
    gboolean refetch = FALSE;
    uint32_t held_w, held_h;

    (void)obj, (void)pspec;
    g_mutex_lock(&sink->lock);
    qs_console_sink_held(sink, &held_w, &held_h);
    sink->console_width = w;
    sink->console_height = h;
    /* qemu 7.2 shows some resizes only this way (qemu-dbus-display.md §6),
     * sometimes after the Updates of the new size, which the listener had
     * to refuse: then only a new listener's first Scanout restores them. */
    if (held_w && (held_w != w || held_h != h) && w && h &&
        qs_screen_resize(sink->screen, w, h, g_get_monotonic_time(), &error)) {
        refetch = sink->lost;
    }
    g_mutex_unlock(&sink->lock);
    if (error) {
        g_warning("%s: resize to %ux%u refused: %s", sink->name, w, h,
                  error->message);
    }
    if (refetch && console->current) {
        g_message("%s: resized to %ux%u after its updates; asking qemu for "
                  "the whole surface again", sink->name, w, h);
        retire_current(console);
        schedule_register(console, REREGISTER_DELAY_MS);
    }
}

QsConsole *qs_console_new(GDBusConnection *conn, const char *dest,
                          uint32_t id, GError **error)
{
    g_autoptr(QsConsole) console = g_new0(QsConsole, 1);

    console->id = id;
    console->path = g_strdup_printf("/org/qemu/Display1/Console_%u", id);
    console->retired = g_ptr_array_new();
    console->cancellable = g_cancellable_new();
    console->backoff_ms = REREGISTER_DELAY_MS;
    console->watchdog_enabled = TRUE;
    console->present = TRUE;
    g_mutex_init(&console->sink.lock);
    console->sink.name = g_strdup_printf("console %u", id);
    console->sink.screen = qs_screen_new();
    console->sink.cursor = qs_cursor_new();
    console->proxy = qemu_dbus_display1_console_proxy_new_sync(
        conn, G_DBUS_PROXY_FLAGS_DO_NOT_AUTO_START, dest, console->path, NULL,
        error);
    if (!console->proxy) {
        return NULL;
    }
    console->input = qs_input_new(conn, dest, console->path, error);
    if (!console->input) {
        return NULL;
    }
    console->sink.console_width =
        qemu_dbus_display1_console_get_width(console->proxy);
    console->sink.console_height =
        qemu_dbus_display1_console_get_height(console->proxy);
    g_signal_connect(console->proxy, "notify::width", G_CALLBACK(on_size),
                     console);
    g_signal_connect(console->proxy, "notify::height", G_CALLBACK(on_size),
                     console);
    return g_steal_pointer(&console);
}

void qs_console_free(QsConsole *console)
{
    if (!console) {
        return;
    }
    g_cancellable_cancel(console->cancellable);
    stop_watchdog(console);
    g_clear_handle_id(&console->retry_source, g_source_remove);
    retire_current(console);
    while (console->retired->len) {
        qs_listener_free(g_ptr_array_steal_index_fast(console->retired, 0));
    }
    g_ptr_array_unref(console->retired);
    if (console->proxy) {
        g_signal_handlers_disconnect_by_data(console->proxy, console);
    }
    g_clear_object(&console->proxy);
    g_clear_pointer(&console->input, qs_input_free);
    g_clear_object(&console->cancellable);
    qs_cursor_free(console->sink.cursor);
    qs_screen_free(console->sink.screen);
    g_free(console->sink.name);
    g_mutex_clear(&console->sink.lock);
    g_free(console->lost_why);
    g_free(console->path);
    g_free(console);
}

void qs_console_start(QsConsole *console)
{
    /* Before the listener, which holds it to wake the watchdog. */
    if (!console->watchdog_source) {
        console->watchdog_source = g_source_new(&watchdog_funcs, sizeof(GSource));
        g_source_set_callback(console->watchdog_source, on_watchdog, console, NULL);
        g_source_set_static_name(console->watchdog_source, "qs-watchdog");
        g_source_set_ready_time(console->watchdog_source,
                                g_get_monotonic_time() +
                                    QS_WATCHDOG_PERIOD_MS * 1000);
        g_source_attach(console->watchdog_source, NULL);
    }
    register_listener(console);
}

void qs_console_stop(QsConsole *console)
{
    console->stopped = TRUE;
    g_clear_handle_id(&console->retry_source, g_source_remove);
    stop_watchdog(console);
}

void qs_console_vanished(QsConsole *console)
{
    if (!console->present) {
        return;
    }
    g_warning("%s: qemu removed the console; waiting for it to come back",
              console->sink.name);
    console->present = FALSE;
    g_clear_handle_id(&console->retry_source, g_source_remove);
    retire_current(console);
    g_mutex_lock(&console->sink.lock);
    qs_screen_disable(console->sink.screen);
    g_mutex_unlock(&console->sink.lock);
}

void qs_console_appeared(QsConsole *console)
{
    if (console->present) {
        return;
    }
    g_message("%s: the console is back", console->sink.name);
    console->present = TRUE;
    console->backoff_ms = REREGISTER_DELAY_MS;
    schedule_register(console, 0);
}

uint32_t qs_console_get_id(QsConsole *console)
{
    return console->id;
}

QsScreen *qs_console_get_screen(QsConsole *console)
{
    return console->sink.screen;
}

QsCursor *qs_console_get_cursor(QsConsole *console)
{
    return console->sink.cursor;
}

QsInput *qs_console_get_input(QsConsole *console)
{
    return console->input;
}

void qs_console_get_size(QsConsole *console, uint32_t *width, uint32_t *height)
{
    g_mutex_lock(&console->sink.lock);
    *width = console->sink.console_width;
    *height = console->sink.console_height;
    g_mutex_unlock(&console->sink.lock);
}

void qs_console_get_stats(QsConsole *console, QsConsoleStats *stats)
{
    QsListenerStats sum = console->past;

    *stats = console->stats;
    if (console->current) {
        uint64_t queued, unread;

        add_stats(&sum, console->current);
        qs_listener_get_backlog(console->current, &queued, &unread);
        stats->backlog = queued + unread;
    }
    stats->scanouts = sum.scanouts;
    stats->updates = sum.updates;
    stats->scanout_maps = sum.scanout_maps;
    stats->update_maps = sum.update_maps;
    stats->dropped = sum.dropped;
    stats->early = sum.early;
}

#ifdef QS_TEST_CONTROLS
void qs_console_set_watchdog(QsConsole *console, gboolean enabled)
{
    console->watchdog_enabled = enabled;
}

gboolean qs_console_stall_listener(QsConsole *console, unsigned seconds)
{
    if (!console->current) {
        return FALSE;
    }
    qs_listener_stall(console->current, seconds);
    return TRUE;
}

gboolean qs_console_slow_reader(QsConsole *console, unsigned ms, unsigned seconds)
{
    if (!console->current) {
        return FALSE;
    }
    qs_listener_slow_reader(console->current, ms, seconds);
    return TRUE;
}
#endif
