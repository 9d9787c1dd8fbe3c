/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --print-capabilities (qs-helper-capabilities.h). */
#include "qs-helper-capabilities.h"

#include <stdio.h>

#include "net/qs-tls.h"

/* For a management layer that starts helpers (as libvirt asks qemu-rdp):
 * each feature names options or interfaces this binary has, each of them
 * in --help-all (tests/unit/check-capabilities.py holds that). "tls" only
 * when the TLS module loads, so the answer holds for this installation,
 * not just this build. */
gboolean qs_helper_print_capabilities(void)
{
    static const char *const always[] = {
        "dbus-p2p-fd",     /* --dbus-p2p-fd: virDomainOpenGraphicsFD */
        "dbus-address",    /* --dbus-address, --vm: a per-VM bus */
        "listen-fd",       /* --listen-fd, --tls-listen-fd: bound by the caller */
        "ticket-fd",       /* --ticket-fd: the password on a pipe */
        "control-fd",      /* --control-fd: org.qemuspice.Helper1 */
        "multi-console",   /* every graphic console, or --console N */
        "sessions",        /* several clients at once: --max-sessions, --when-full */
        "max-fps",         /* --max-fps: a ceiling on streams' frame rate */
        "view-ticket",     /* view-only clients: --view-ticket-file, --view-ticket-fd */
        "confinement",     /* --user and the rest of --help-confinement */
        "port-fd",         /* --port-fd NAME=FD: virtio-serial ports as port channels */
        "usbredir-fd",     /* --usbredir-fd FD: usb-redir devices as usbredir channels */
        "smartcard-fd",    /* --smartcard-fd FD: ccid-card-passthru as the smartcard channel */
        "agent-fd",        /* --agent-fd FD: the guest's own agent */
        "token-keys",      /* signed console tokens: --token-keys-file, --token-keys-fd */
        "dbus-chardev",    /* qemu's -chardev dbus (org.qemu.Display1.Chardev) as channels */
        "add-client",      /* org.qemuspice.Helper1.AddClient: virDomainOpenGraphicsFD */
        "console-page",    /* the browser page on the console ports: --no-console-page,
                            * --spice-html5-dir */
    };
    g_autoptr(GError) error = NULL;
    g_autoptr(GString) out = g_string_new(NULL);

    g_string_append_printf(out, "{\"type\":\"qemu-spice\",\"version\":\"%s\","
                           "\"features\":[", QS_VERSION);
    for (guint i = 0; i < G_N_ELEMENTS(always); i++) {
        g_string_append_printf(out, "%s\"%s\"", i ? "," : "", always[i]);
    }
    if (qs_tls_load(&error)) {
        g_string_append(out, ",\"tls\"");
    }
    g_string_append(out, "]}\n");
    fputs(out->str, stdout);
    return fflush(stdout) == 0;
}
