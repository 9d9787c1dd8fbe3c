/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qemu-spice: a SPICE server fed by qemu's D-Bus display. */

#include <stdio.h>
#include <stdlib.h>
#include <glib.h>

enum {
    QS_EXIT_OK = 0,
    QS_EXIT_FAILURE = 1,
    QS_EXIT_USAGE = 2,
};

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

    ctx = g_option_context_new("- serve a qemu console over SPICE");
    g_option_context_set_summary(ctx,
        "qemu-spice attaches to qemu's D-Bus display (-display dbus) and\n"
        "serves that console to SPICE clients such as remote-viewer.");
    g_option_context_set_description(ctx,
        "Not yet implemented: attaching to qemu and serving clients.\n"
        "Until those land this binary only answers --help and --version.\n"
        "See qemu-spice(1).");
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
        fprintf(stderr, "qemu-spice: %s\nTry 'qemu-spice --help'.\n",
                error->message);
        return QS_EXIT_USAGE;
    }
    if (arg_version) {
        printf("qemu-spice %s\n", QS_VERSION);
        return QS_EXIT_OK;
    }
    if (argc > 1) {
        fprintf(stderr, "qemu-spice: unexpected argument '%s'\n", argv[1]);
        return QS_EXIT_USAGE;
    }
    fprintf(stderr, "qemu-spice: no display source: attaching to qemu is "
            "not implemented yet\n");
    return QS_EXIT_FAILURE;
}
