/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qemu-spice: a SPICE server fed by qemu's D-Bus display. */

#include <glib-unix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spice/enums.h>

#include "channels/qs-agent-channel.h"
#include "channels/qs-agent-clipboard.h"
#include "channels/qs-agent-guest.h"
#include "channels/qs-channels.h"
#include "channels/qs-vmc-bridge.h"
#include "wire/qs-vmc-msg.h"
#include "display/qs-console.h"
#include "display/qs-display.h"
#include "display/qs-ui-info.h"
#include "flow/qs-display-plan.h"
#include "net/qs-net-config.h"
#include "net/qs-server.h"
#include "net/qs-tls.h"
#include "qs-helper-audio.h"
#include "qs-helper-bridges.h"
#include "qs-helper-capabilities.h"
#include "qs-helper-chardevs.h"
#include "qs-helper-control.h"
#include "qs-confine.h"
#ifdef QS_TEST_CONTROLS
#include "display/qs-test-control.h"
#endif

enum {
    QS_EXIT_OK = 0,
    QS_EXIT_FAILURE = 1,
    QS_EXIT_USAGE = 2,
};

/* Each startup call to qemu (handshake, discovery, QMP) is bounded by it. */
#define STARTUP_TIMEOUT_MS 10000

static gboolean arg_version;
static gboolean arg_print_capabilities;
static int arg_p2p_fd = -1;
static char *arg_dbus_address;
static char *arg_vm;
static char *arg_qmp;
static int arg_console = -1;
static int arg_control_fd = -1;
static char **arg_port_fds;
static char **arg_usbredir_fds;
static char *arg_smartcard_fd;
static int arg_agent_fd = -1;
static int arg_max_sessions = QS_CHANNELS_DEFAULT_SESSIONS;
static char *arg_when_full;
static int arg_max_fps = QS_PLAN_STREAM_FPS;
static QsConfineConfig confine_cfg;
#ifdef QS_TEST_CONTROLS
static char *arg_test_control;
#endif

static const GOptionEntry entries[] = {
    { "dbus-p2p-fd", 0, 0, G_OPTION_ARG_INT, &arg_p2p_fd,
      "Speak peer-to-peer D-Bus with qemu on inherited descriptor FD "
      "(from QMP add_client or virDomainOpenGraphicsFD)", "FD" },
    { "dbus-address", 0, 0, G_OPTION_ARG_STRING, &arg_dbus_address,
      "Find qemu (owner of org.qemu) on the D-Bus bus at ADDR", "ADDR" },
    { "vm", 0, 0, G_OPTION_ARG_STRING, &arg_vm,
      "With --dbus-address: the VM to attach to, by name or UUID", "VM" },
    { "qmp", 0, 0, G_OPTION_ARG_FILENAME, &arg_qmp,
      "Development: attach through qemu's QMP socket at PATH "
      "(qemu needs -display dbus,p2p=on)", "PATH" },
    { "console", 0, 0, G_OPTION_ARG_INT, &arg_console,
      "Serve only console N (default: every graphic console)", "N" },
#ifdef QS_TEST_CONTROLS
    { "test-control", 0, 0, G_OPTION_ARG_FILENAME, &arg_test_control,
      "Test builds only: control socket at PATH", "PATH" },
#endif
    { "control-fd", 0, 0, G_OPTION_ARG_INT, &arg_control_fd,
      "Serve the control interface (org.qemuspice.Helper1: tickets, "
      "certificates, status, AddClient for a client's connected socket) on "
      "connections accepted from the listening Unix socket FD; with "
      "--dbus-address also on the VM's bus", "FD" },
    { "port-fd", 0, 0, G_OPTION_ARG_STRING_ARRAY, &arg_port_fds,
      "Offer qemu's virtio-serial port NAME as a SPICE port channel, its "
      "chardev reached on the inherited stream socket FD (connected, or "
      "listening for qemu); repeatable", "NAME=FD" },
    { "usbredir-fd", 0, 0, G_OPTION_ARG_STRING_ARRAY, &arg_usbredir_fds,
      "Offer qemu's usb-redir device as a SPICE usbredir channel (ids 0, 1, "
      "... in the order given), its chardev connecting to the inherited "
      "listening stream socket FD; repeatable", "FD" },
    { "smartcard-fd", 0, 0, G_OPTION_ARG_STRING, &arg_smartcard_fd,
      "Offer qemu's ccid-card-passthru smartcard as the SPICE smartcard "
      "channel (one reader), its chardev reached on the inherited stream "
      "socket FD (connected, or listening for qemu)", "FD" },
    { "agent-fd", 0, 0, G_OPTION_ARG_INT, &arg_agent_fd,
      "The guest's agent port com.redhat.spice.0, its chardev reached on the "
      "inherited stream socket FD (connected, or listening for qemu): the "
      "guest's spice-vdagent serves the clients' agent messages instead of "
      "the emulated agent", "FD" },
    { "max-sessions", 0, 0, G_OPTION_ARG_INT, &arg_max_sessions,
      "Serve at most N clients at once, each in its own session paced for "
      "its own link (1-16, default 4)", "N" },
    { "when-full", 0, 0, G_OPTION_ARG_STRING, &arg_when_full,
      "A new client when --max-sessions are connected: 'refuse' it with a "
      "link error (default) or 'replace' the oldest session", "POLICY" },
    { "max-fps", 0, 0, G_OPTION_ARG_INT, &arg_max_fps,
      "Send video streams at most N frames a second (1-30, default 30): "
      "fewer frames cost the helper less CPU", "N" },
    { "version", 'V', 0, G_OPTION_ARG_NONE, &arg_version,
      "Print the version and exit", NULL },
    { "print-capabilities", 0, 0, G_OPTION_ARG_NONE, &arg_print_capabilities,
      "Print what this helper supports as JSON (for a management layer) and "
      "exit", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL }
};

typedef struct {
    GMainLoop *loop;
    int status;
    const char *leaving;        /* why the loop ended, for the control peers */
    gboolean display_gone;      /* may come before the loop runs */
} App;

static void log_handler(const char *domain, GLogLevelFlags level,
                        const char *message, gpointer data)
{
    const char *kind = "";

    (void)domain, (void)data;
    if (level & G_LOG_LEVEL_DEBUG) {
        const char *env = g_getenv("G_MESSAGES_DEBUG");

        if (!env || !*env) {
            return;
        }
        kind = "debug: ";
    } else if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL)) {
        kind = "error: ";
    } else if (level & G_LOG_LEVEL_WARNING) {
        kind = "warning: ";
    }
    fprintf(stderr, "qemu-spice: %s%s\n", kind, message);
}

static gboolean on_signal(gpointer data)
{
    App *app = data;

    g_message("signal received; exiting");
    app->status = QS_EXIT_OK;
    app->leaving = "signal received";
    g_main_loop_quit(app->loop);
    return G_SOURCE_CONTINUE;
}

static gboolean on_sighup(gpointer data)
{
    QsServer *server = data;
    g_autoptr(GError) error = NULL;

    if (!qs_server_reload_tls(server, &error)) {
        g_warning("SIGHUP: TLS certificates not reloaded: %s", error->message);
    } else {
        g_message("SIGHUP: TLS certificates reloaded");
    }
    return G_SOURCE_CONTINUE;
}

static void on_gone(QsDisplay *display, const char *reason, gpointer data)
{
    App *app = data;

    (void)display;
    g_message("%s; exiting", reason);
    app->status = QS_EXIT_OK;
    app->leaving = "qemu's display went away";
    app->display_gone = TRUE;
    g_main_loop_quit(app->loop);
}

#ifdef QS_TEST_CONTROLS
/* Test builds: QS_TEST_DISPLAY_START_DELAY_MS holds the display's start
 * back, so that a test can make qemu go before it. */
static void hold_display_start(void)
{
    const char *env = g_getenv("QS_TEST_DISPLAY_START_DELAY_MS");
    guint64 ms = 0;

    if (env && g_ascii_string_to_unsigned(env, 10, 1, 60000, &ms, NULL)) {
        g_message("test build: starting the display in %u ms", (guint)ms);
        g_usleep(ms * 1000);
    }
}
#endif

static void on_sessions(guint n_sessions, gpointer display)
{
    qs_display_set_watched(display, n_sessions > 0);
}

/* Resize: the client's monitors config, through the agent, as
 * each served console's Console.SetUIInfo (head i is the i-th served
 * console); qemu's answer back to the agent's reply. */
typedef struct {
    QsUiInfo *ui[QS_DISPLAY_MAX_SERVED];
    guint n;
} UiInfos;

static void on_monitor(gpointer data, guint head, const QsAgentMonitor *m)
{
    UiInfos *uis = data;

    if (head >= uis->n) {
        return;         /* the agent passes only heads the channels serve */
    }
    qs_ui_info_request(uis->ui[head], &(QsUiInfoRequest){
        .width_mm = m->width_mm, .height_mm = m->height_mm,
        .x = m->x, .y = m->y, .width = m->width, .height = m->height,
    });
}

static const QsAgentMonitorsOps monitors_ops = { .configure = on_monitor };

static void on_ui_info_done(gboolean applied, gpointer channels)
{
    qs_agent_monitors_done(channels, applied);
}

static int usage_error(const char *message)
{
    fprintf(stderr, "qemu-spice: %s\nTry 'qemu-spice --help'.\n", message);
    return QS_EXIT_USAGE;
}

static int check_attach_options(void)
{
    int modes = (arg_p2p_fd != -1) + (arg_dbus_address != NULL) +
                (arg_qmp != NULL);

    if (modes == 0) {
        return usage_error("choose how to attach to qemu: --dbus-p2p-fd, "
                           "--dbus-address or --qmp");
    }
    if (modes > 1) {
        return usage_error("--dbus-p2p-fd, --dbus-address and --qmp are "
                           "mutually exclusive");
    }
    if (arg_p2p_fd != -1 && arg_p2p_fd < 0) {
        return usage_error("--dbus-p2p-fd takes a descriptor number >= 0");
    }
    if (arg_vm && !arg_dbus_address) {
        return usage_error("--vm only applies with --dbus-address");
    }
    if (arg_control_fd < -1) {
        return usage_error("--control-fd takes a descriptor number >= 0");
    }
    if (arg_console < -1) {
        return usage_error("--console takes a console number >= 0");
    }
    return QS_EXIT_OK;
}

/* What the clients get: how many at once, who yields when full, the
 * streams' frame rate. */
static int check_serving_options(QsWhenFull *when_full)
{
    if (arg_max_sessions < 1 || arg_max_sessions > QS_CHANNELS_MAX_SESSIONS) {
        g_autofree char *msg = g_strdup_printf(
            "--max-sessions takes a number of clients from 1 to %u, not %d",
            QS_CHANNELS_MAX_SESSIONS, arg_max_sessions);

        return usage_error(msg);
    }
    if (!arg_when_full || g_str_equal(arg_when_full, "refuse")) {
        *when_full = QS_WHEN_FULL_REFUSE;
    } else if (g_str_equal(arg_when_full, "replace")) {
        *when_full = QS_WHEN_FULL_REPLACE;
    } else {
        g_autofree char *msg = g_strdup_printf(
            "--when-full takes 'refuse' or 'replace', not '%s'", arg_when_full);

        return usage_error(msg);
    }
    if (arg_max_fps < 1 || arg_max_fps > QS_PLAN_STREAM_FPS) {
        g_autofree char *msg = g_strdup_printf(
            "--max-fps takes a frame rate from 1 to %u, not %d",
            QS_PLAN_STREAM_FPS, arg_max_fps);

        return usage_error(msg);
    }
    return QS_EXIT_OK;
}

int main(int argc, char **argv)
{
    g_autoptr(GOptionContext) ctx = NULL;
    g_autoptr(GError) error = NULL;
    g_autoptr(QsDisplay) display = NULL;
    QsChannels *channels = NULL;
    QsServer *server = NULL;
    QsChannelsHead heads[QS_DISPLAY_MAX_SERVED];
    QsVmcBridge *bridges[QS_PORTS_MAX + QS_USBREDIR_MAX + 1];
    guint n_bridges = 0;
    QsNetConfig net_cfg;
    QsDisplayOptions opts;
    App app = { NULL, QS_EXIT_OK, "exiting", FALSE };
    QsClipboard *clipboard = NULL;
    g_autoptr(QsAgentGuest) guest_agent = NULL;
    UiInfos ui_infos = { { NULL }, 0 };
    QsHelperAudio *audio;
    QsHelperControl hc;
    g_autoptr(QsControl) control = NULL;
    QsWhenFull when_full = QS_WHEN_FULL_REFUSE;
    int r;

    ctx = g_option_context_new("- serve a qemu console over SPICE");
    g_option_context_set_summary(ctx,
        "qemu-spice attaches to qemu's D-Bus display (-display dbus) and\n"
        "serves that console to SPICE clients such as remote-viewer.");
    g_option_context_set_description(ctx,
        "Exactly one of --dbus-p2p-fd, --dbus-address and --qmp is needed,\n"
        "and at least one listener (see --help-net).\n"
        "\n"
        "qemu's D-Bus chardevs (-chardev dbus, org.qemu.Display1.Chardev) are\n"
        "served without options: com.redhat.spice.0 as the guest's agent,\n"
        "each org.qemu.usbredir as a usbredir channel, org.spice-space.smartcard\n"
        "as the smartcard channel, names under org.spice-space. and\n"
        "org.qemu.console. as port channels; the --*-fd options give the same\n"
        "from sockets instead.\n"
        "See qemu-spice(1).");
    g_option_context_add_main_entries(ctx, entries, NULL);
    qs_net_config_init(&net_cfg);
    g_option_context_add_group(ctx, qs_net_option_group(&net_cfg));
    qs_confine_config_init(&confine_cfg);
    g_option_context_add_group(ctx, qs_confine_option_group(&confine_cfg));
    if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
        qs_net_config_clear(&net_cfg);
        return usage_error(error->message);
    }
    if (arg_version) {
        printf("qemu-spice %s\n", QS_VERSION);
        return QS_EXIT_OK;
    }
    if (arg_print_capabilities) {
        qs_net_config_clear(&net_cfg);
        return qs_helper_print_capabilities() ? QS_EXIT_OK : QS_EXIT_FAILURE;
    }
    if (argc > 1) {
        g_autofree char *msg = g_strdup_printf("unexpected argument '%s'",
                                               argv[1]);
        return usage_error(msg);
    }
    r = check_attach_options();
    if (r == QS_EXIT_OK) {
        r = check_serving_options(&when_full);
    }
    if (r != QS_EXIT_OK) {
        qs_net_config_clear(&net_cfg);
        return r;
    }
    if (!qs_net_config_validate(&net_cfg, &error)) {
        qs_net_config_clear(&net_cfg);
        return usage_error(error->message);
    }
    /* The TLS module is loaded only for a TLS port: a missing one is said
     * before anything is attached. */
    if ((net_cfg.tls_listen || net_cfg.tls_listen_fd >= 0) && !qs_tls_load(&error)) {
        fprintf(stderr, "qemu-spice: %s\n", error->message);
        qs_net_config_clear(&net_cfg);
        return QS_EXIT_FAILURE;
    }
    g_log_set_default_handler(log_handler, NULL);
    /* GLib's structured messages too go to stderr as text: its default
     * writer, seeing journald on stderr (under systemd), would open a
     * socket of its own, which the seccomp filter kills us for. */
    g_log_set_writer_func(g_log_writer_standard_streams, NULL, NULL);
    /* The chardevs' descriptors are checked before anything is attached. */
    if (!qs_helper_make_bridges(arg_port_fds, arg_usbredir_fds, arg_smartcard_fd, bridges,
                                &n_bridges, &error)) {
        qs_helper_free_bridges(bridges, n_bridges);
        qs_net_config_clear(&net_cfg);
        return usage_error(error->message);
    }
    if (arg_agent_fd >= 0 && !(guest_agent = qs_helper_make_guest_agent(arg_agent_fd, &error))) {
        qs_helper_free_bridges(bridges, n_bridges);
        qs_net_config_clear(&net_cfg);
        return usage_error(error->message);
    }
    /* Before any thread: uid for a per-VM bus, no_new_privs, bounding set. */
    if (!qs_confine_prepare(&confine_cfg, arg_dbus_address != NULL, &error)) {
        qs_helper_free_bridges(bridges, n_bridges);
        qs_net_config_clear(&net_cfg);
        return usage_error(error->message);
    }

    opts = (QsDisplayOptions){
        .p2p_fd = arg_p2p_fd,
        .dbus_address = arg_dbus_address,
        .vm = arg_vm,
        .qmp_path = arg_qmp,
        .console = arg_console,
        .timeout_ms = STARTUP_TIMEOUT_MS,
    };
    display = qs_display_attach(&opts, &error);
    if (!display) {
        fprintf(stderr, "qemu-spice: %s\n", error->message);
        qs_helper_free_bridges(bridges, n_bridges);
        qs_net_config_clear(&net_cfg);
        return QS_EXIT_FAILURE;
    }
    /* Back to root for the rest of the start-up (listeners, files). */
    if (!qs_confine_end_bus_identity(&confine_cfg, &error) ||
        !qs_helper_add_dbus_chardevs(display, bridges, &n_bridges, &guest_agent, &error)) {
        qs_helper_free_bridges(bridges, n_bridges);
        qs_net_config_clear(&net_cfg);
        if (error->domain == G_OPTION_ERROR) {
            return usage_error(error->message);
        }
        fprintf(stderr, "qemu-spice: %s\n", error->message);
        return QS_EXIT_FAILURE;
    }
    /* One head (display + cursor channel) per served console, in order. */
    G_STATIC_ASSERT(QS_DISPLAY_MAX_SERVED <= QS_CHANNELS_MAX_HEADS);
    for (guint i = 0; i < qs_display_get_n_consoles(display); i++) {
        QsConsole *c = qs_display_get_console_at(display, i);

        heads[i] = (QsChannelsHead){ qs_console_get_screen(c),
                                     qs_console_get_cursor(c),
                                     qs_console_get_input(c) };
    }
    G_STATIC_ASSERT(QS_PORTS_MAX + QS_USBREDIR_MAX <= QS_CHANNELS_MAX_BRIDGES);
    channels = qs_channels_new(&(QsChannelsConfig){
        .vm_name = qs_display_get_vm_name(display),
        .vm_uuid = qs_display_get_vm_uuid(display),
        .heads = heads,
        .n_heads = qs_display_get_n_consoles(display),
        .bridges = bridges,
        .n_bridges = n_bridges,
        .max_sessions = (guint)arg_max_sessions,
        .when_full = when_full,
        .max_fps = (uint32_t)arg_max_fps,
    });
    server = qs_server_new(&net_cfg, qs_channels_server_callbacks(), channels,
                           &error);
    if (!server) {
        fprintf(stderr, "qemu-spice: %s\n", error->message);
        qs_channels_free(channels);
        qs_net_config_clear(&net_cfg);
        return QS_EXIT_FAILURE;
    }
    hc = (QsHelperControl){ .server = server, .channels = channels };
    if ((arg_control_fd >= 0 || arg_dbus_address) &&
        !(control = qs_helper_control_start(
              arg_control_fd,
              arg_dbus_address ? qs_display_get_connection(display) : NULL,
              &hc, &error))) {
        fprintf(stderr, "qemu-spice: %s\n", error->message);
        qs_server_free(server);
        qs_channels_free(channels);
        qs_net_config_clear(&net_cfg);
        return QS_EXIT_FAILURE;
    }
#ifdef QS_TEST_CONTROLS
    g_autoptr(QsTestControl) tc = NULL;

    if (arg_test_control) {
        tc = qs_test_control_new(arg_test_control, display, &error);
        if (!tc) {
            fprintf(stderr, "qemu-spice: %s\n", error->message);
            qs_server_free(server);
            qs_channels_free(channels);
            qs_net_config_clear(&net_cfg);
            return QS_EXIT_FAILURE;
        }
    }
#endif
    if (guest_agent) {
        qs_agent_set_guest(channels, guest_agent);
    } else {
        /* Clipboard: qemu's D-Bus clipboard behind an emulated agent. */
        g_message("agent: emulated (text clipboard through qemu's D-Bus clipboard, "
                  "monitors configs as resizes)");
        clipboard = qs_clipboard_new(qs_display_get_connection(display),
                                     qs_display_get_dest(display));
        qs_agent_use_clipboard(channels, clipboard);
    }
    for (guint i = 0; i < qs_display_get_n_consoles(display); i++) {
        ui_infos.ui[ui_infos.n++] = qs_ui_info_new(
            qs_display_get_connection(display), qs_display_get_dest(display),
            qs_console_get_id(qs_display_get_console_at(display, i)),
            on_ui_info_done, channels);
    }
    qs_agent_set_monitors(channels, &monitors_ops, &ui_infos);
    /* Sound: qemu's D-Bus audio to the playback and record channels. */
    audio = qs_helper_audio_new(channels, qs_display_get_connection(display),
                                qs_display_get_dest(display));
    app.loop = g_main_loop_new(NULL, FALSE);
    g_unix_signal_add(SIGINT, on_signal, &app);
    g_unix_signal_add(SIGTERM, on_signal, &app);
    g_unix_signal_add(SIGHUP, on_sighup, server);
    /* Everything is received, opened and started: confine. Before the
     * listeners start: their D-Bus handshakes must run under the final uid. */
    if (!qs_confine_apply(&confine_cfg, &error)) {
        fprintf(stderr, "qemu-spice: %s\n", error->message);
        app.status = QS_EXIT_FAILURE;
    } else {
#ifdef QS_TEST_CONTROLS
        hold_display_start();
#endif
        qs_display_start(display, on_gone, &app);
        qs_channels_watch_sessions(channels, on_sessions, display);
        if (clipboard) {
            qs_clipboard_start(clipboard);
        }
        qs_helper_audio_start(audio, qs_display_get_audio(display));
        /* qemu may have gone during the start: a quit before the loop
         * runs is lost. */
        if (!app.display_gone) {
            g_main_loop_run(app.loop);
        }
    }
    g_main_loop_unref(app.loop);
    qs_channels_watch_sessions(channels, NULL, NULL);
    if (control) {
        qs_control_leaving(control, app.leaving);
        g_clear_pointer(&control, qs_control_free);
    }
#ifdef QS_TEST_CONTROLS
    g_clear_pointer(&tc, qs_test_control_free);
#endif
    /* Connections free their channels, and those their screen watches, so the
     * server goes before the channels, and both before the screen's owner. */
    qs_server_free(server);
    if (clipboard) {
        qs_agent_drop_clipboard(channels, clipboard);
    }
    qs_agent_set_guest(channels, NULL);
    /* Its chardev's watch is on one of the display's chardevs. */
    g_clear_pointer(&guest_agent, qs_agent_guest_free);
    qs_agent_set_monitors(channels, NULL, NULL);
    for (guint i = 0; i < ui_infos.n; i++) {
        qs_ui_info_free(ui_infos.ui[i]);
    }
    qs_helper_audio_free(audio);
    qs_channels_free(channels);
    g_clear_pointer(&clipboard, qs_clipboard_free);
    g_clear_pointer(&display, qs_display_free);
    qs_net_config_clear(&net_cfg);
    qs_confine_config_clear(&confine_cfg);
    g_free(arg_dbus_address);
    g_free(arg_vm);
    g_free(arg_qmp);
    g_strfreev(arg_port_fds);
    g_strfreev(arg_usbredir_fds);
    g_free(arg_smartcard_fd);
#ifdef QS_TEST_CONTROLS
    g_free(arg_test_control);
#endif
    return app.status;
}
