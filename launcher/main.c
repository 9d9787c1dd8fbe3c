/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qemu-spice-launcher: starts a qemu-spice helper for a libvirt domain. */

#include <stdio.h>
#include <string.h>
#include <glib.h>

static gboolean arg_version;

static const GOptionEntry entries[] = {
    { "version", 'V', 0, G_OPTION_ARG_NONE, &arg_version,
      "Print the version and exit", NULL },
    { NULL }
};

int main(int argc, char **argv)
{
    g_autoptr(GOptionContext) ctx = NULL;
    g_autoptr(GError) error = NULL;

    ctx = g_option_context_new("COMMAND DOMAIN - manage a domain's SPICE console");
    g_option_context_set_summary(ctx,
        "Commands (planned, not implemented yet): attach, detach, status,\n"
        "console, set-ticket. See qemu-spice-launcher(1).");
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
        fprintf(stderr, "qemu-spice-launcher: %s\n"
                "Try 'qemu-spice-launcher --help'.\n", error->message);
        return 2;
    }
    if (arg_version) {
        printf("qemu-spice-launcher %s\n", QS_VERSION);
        return 0;
    }
    if (argc < 2) {
        fprintf(stderr, "qemu-spice-launcher: no command given\n"
                "Try 'qemu-spice-launcher --help'.\n");
        return 2;
    }
    fprintf(stderr, "qemu-spice-launcher: command '%s' is not implemented yet\n",
            argv[1]);
    return 2;
}
