/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qemu-spice-launcher: starts a qemu-spice helper for a libvirt domain. */

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include "qs-launch-attach.h"
#include "qs-launch-commands.h"
#include "qs-launch-config.h"
#include "qs-launch-hook.h"
#include "qs-launch-set-ticket.h"
#include "qs-launch-status.h"
#include "qs-launch-tokens.h"

static gboolean arg_version;
static char *arg_uri;
static char *arg_config;
static gboolean arg_supervise;
static gboolean arg_no_supervise;
static gboolean arg_foreground;
static char *arg_ticket_file;
static char *arg_expires;
static int arg_wait = -1;
static char *arg_format;
static gboolean arg_json;
static gboolean arg_no_wait;
static gboolean arg_disconnect;
static char *arg_rights;
static int arg_ttl = 300;
static gboolean arg_single_use;
static int arg_key_id;
static gboolean arg_qr;
static gboolean arg_systemd;

static const GOptionEntry entries[] = {
    { "connect", 'c', 0, G_OPTION_ARG_STRING, &arg_uri,
      "libvirt URI (default: [launcher] uri, qemu:///system)", "URI" },
    { "config", 'C', 0, G_OPTION_ARG_FILENAME, &arg_config,
      "Configuration file (default " QS_LAUNCH_DEFAULT_CONFIG ")", "PATH" },
    { "supervise", 0, 0, G_OPTION_ARG_NONE, &arg_supervise,
      "attach: restart the helper on abnormal exit (default: [launcher] "
      "supervise)", NULL },
    { "no-supervise", 0, 0, G_OPTION_ARG_NONE, &arg_no_supervise,
      "attach: do not restart the helper", NULL },
    { "foreground", 'f', 0, G_OPTION_ARG_NONE, &arg_foreground,
      "attach: stay in the foreground until the helper ends (systemd)", NULL },
    { "ticket-file", 0, 0, G_OPTION_ARG_FILENAME, &arg_ticket_file,
      "attach, set-ticket: take the ticket from PATH (first line) instead of "
      "a random one", "PATH" },
    { "expires", 0, 0, G_OPTION_ARG_STRING, &arg_expires,
      "attach, set-ticket: ticket expiry: never, SECONDS, +SECONDS, "
      "@UNIX_SECONDS", "WHEN" },
    { "wait", 'w', 0, G_OPTION_ARG_INT, &arg_wait,
      "attach: wait up to SECONDS for the domain to run (default 0)",
      "SECONDS" },
    { "format", 0, 0, G_OPTION_ARG_STRING, &arg_format,
      "console: uri (default), json, vv, kerbside, url (a browser link with a "
      "single-use token)", "FORMAT" },
    { "qr", 0, 0, G_OPTION_ARG_NONE, &arg_qr,
      "console --format url: also print the link as a QR code", NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &arg_json,
      "status: one JSON object per line", NULL },
    { "no-wait", 0, 0, G_OPTION_ARG_NONE, &arg_no_wait,
      "detach: signal the launcher and return at once", NULL },
    { "disconnect", 0, 0, G_OPTION_ARG_NONE, &arg_disconnect,
      "set-ticket: also disconnect the connected viewer (default: keep it)",
      NULL },
    { "rights", 0, 0, G_OPTION_ARG_STRING, &arg_rights,
      "token, console, set-ticket: view or control (default control)", "RIGHTS" },
    { "ttl", 0, 0, G_OPTION_ARG_INT, &arg_ttl,
      "token, and console when it hands out a token (url, vv, --rights view): "
      "seconds until it expires (default 300)", "SECONDS" },
    { "single-use", 0, 0, G_OPTION_ARG_NONE, &arg_single_use,
      "token: it links one viewer session only", NULL },
    { "key-id", 0, 0, G_OPTION_ARG_INT, &arg_key_id,
      "token: the master key id (default: the highest)", "ID" },
    { "systemd", 0, 0, G_OPTION_ARG_NONE, &arg_systemd,
      "attach: run as the main process of qemu-spice@DOMAIN.service (its "
      "unit file passes this; implies --foreground)", NULL },
    { "version", 'V', 0, G_OPTION_ARG_NONE, &arg_version,
      "Print the version and exit", NULL },
    G_OPTION_ENTRY_NULL
};

static int usage(const char *msg)
{
    fprintf(stderr, "qemu-spice-launcher: %s\n"
            "Try 'qemu-spice-launcher --help'.\n", msg);
    return 2;
}

static int run(int argc, char **argv)
{
    g_autoptr(QsLaunchConfig) cfg = NULL;
    g_autoptr(GError) error = NULL;
    const char *cmd = argv[1];
    const char *domain = argc > 2 ? argv[2] : NULL;
    gboolean needs_domain = strcmp(cmd, "status") != 0;

    if (strcmp(cmd, "attach") && strcmp(cmd, "detach") &&
        strcmp(cmd, "status") && strcmp(cmd, "console") &&
        strcmp(cmd, "set-ticket") && strcmp(cmd, "disconnect") && strcmp(cmd, "hook") &&
        strcmp(cmd, "token") && strcmp(cmd, "reload")) {
        g_autofree char *m = g_strdup_printf("unknown command '%s'", cmd);

        return usage(m);
    }
    if (strcmp(cmd, "disconnect") == 0) {
        if (argc != 4) {
            return usage("disconnect takes a DOMAIN and a client ADDRESS:PORT");
        }
    } else if (strcmp(cmd, "hook") != 0 &&
               (argc > 3 || (needs_domain && !domain))) {
        return usage(needs_domain ? "give exactly one DOMAIN"
                                  : "give at most one DOMAIN");
    }
    if (arg_supervise && arg_no_supervise) {
        return usage("--supervise and --no-supervise exclude each other");
    }
    if (arg_wait < -1 || arg_wait > 3600) {
        return usage("--wait takes 0 to 3600 seconds");
    }
    cfg = qs_launch_config_load(arg_config, &error);
    if (!cfg && strcmp(cmd, "hook") == 0) {
        /* libvirt drops the stderr of a hook that exits 0, and a hook's
         * failure must not disturb the domain's start or stop. */
        return qs_cmd_hook_unconfigured(error->message, argv + 2);
    }
    if (!cfg) {
        fprintf(stderr, "qemu-spice-launcher: %s\n", error->message);
        return 1;
    }
    if (arg_uri) {
        g_free(cfg->uri);
        cfg->uri = g_strdup(arg_uri);
    }
    if (strcmp(cmd, "attach") == 0) {
        QsAttachOptions o = {
            .ticket_file = arg_ticket_file,
            .expiry = -1,
            .supervise = arg_supervise || (cfg->supervise && !arg_no_supervise),
            .foreground = arg_foreground || arg_systemd,
            .systemd = arg_systemd,
            .wait_s = arg_wait > 0 ? (guint)arg_wait : 0,
        };

        if (arg_expires &&
            !qs_parse_when(arg_expires, g_get_real_time() / G_USEC_PER_SEC,
                           &o.expiry, &error)) {
            return usage(error->message);
        }
        return qs_attach(cfg, domain, &o);
    }
    if (strcmp(cmd, "detach") == 0) {
        return qs_cmd_detach(cfg, domain, !arg_no_wait);
    }
    if (strcmp(cmd, "reload") == 0) {
        return qs_cmd_reload(cfg, domain);
    }
    if (strcmp(cmd, "status") == 0) {
        return qs_cmd_status(cfg, domain, arg_json);
    }
    if (strcmp(cmd, "console") == 0) {
        if (arg_rights && strcmp(arg_rights, "view") && strcmp(arg_rights, "control")) {
            return usage("--rights must be view or control");
        }
        return qs_cmd_console(cfg, domain, arg_format ? arg_format : "uri", arg_rights,
                              arg_ttl, arg_qr);
    }
    if (strcmp(cmd, "set-ticket") == 0 && arg_rights && strcmp(arg_rights, "view") == 0) {
        if (arg_disconnect) {
            return usage("set-ticket --rights view keeps every viewer: no --disconnect");
        }
        return qs_cmd_set_view_ticket(cfg, domain, arg_ticket_file, arg_expires);
    }
    if (strcmp(cmd, "set-ticket") == 0 && arg_rights && strcmp(arg_rights, "control") != 0) {
        return usage("--rights must be view or control");
    }
    if (strcmp(cmd, "set-ticket") == 0) {
        return qs_cmd_set_ticket(cfg, domain, arg_ticket_file, arg_expires,
                                 arg_disconnect);
    }
    if (strcmp(cmd, "disconnect") == 0) {
        return qs_cmd_disconnect(cfg, domain, argv[3]);
    }
    if (strcmp(cmd, "token") == 0) {
        return qs_cmd_token(cfg, domain, arg_rights, arg_ttl, arg_single_use, arg_key_id);
    }
    return qs_cmd_hook(cfg, argv + 2);
}

int main(int argc, char **argv)
{
    g_autoptr(GOptionContext) ctx = NULL;
    g_autoptr(GError) error = NULL;

    /* GLib's own warnings go where ours go (stderr: the unit's journal
     * stream, whose identifier names the domain), not to journald
     * directly under the program's name. */
    g_log_set_writer_func(g_log_writer_standard_streams, NULL, NULL);
    ctx = g_option_context_new("COMMAND [DOMAIN] - manage a domain's SPICE console");
    g_option_context_set_summary(ctx,
        "Commands:\n"
        "  attach DOMAIN        start a qemu-spice helper for the domain\n"
        "  detach DOMAIN        stop it and remove the console\n"
        "  status [DOMAIN]      pid, ports, uptime, clients (exit 4: starting)\n"
        "  console DOMAIN       print the console (--format uri|json|vv|kerbside|url)\n"
        "  set-ticket DOMAIN    new ticket for new links (--disconnect: drop the viewers)\n"
        "  disconnect DOMAIN ADDRESS:PORT  end one viewer's session (as status lists it)\n"
        "  token DOMAIN         mint a signed console token (--rights, --ttl, --single-use)\n"
        "  reload DOMAIN        new certificates and token keys for the running helper\n"
        "  hook DOMAIN OP ...   libvirt qemu hook entry point (XML on stdin)\n"
        "See qemu-spice-launcher(1) and qemu-spice.conf(5).");
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
        return usage(error->message);
    }
    if (arg_version) {
        printf("qemu-spice-launcher %s\n", QS_VERSION);
        return 0;
    }
    if (argc < 2) {
        return usage("no command given");
    }
    /* A reader that went away (the attach command's parent, a closed
     * pipe) must be an error return, not our death. */
    signal(SIGPIPE, SIG_IGN);
    return run(argc, argv);
}
