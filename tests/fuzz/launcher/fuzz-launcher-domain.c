/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: a domain's XML as the launcher reads it (qs_domain_info_parse
 * for attach, qs_domain_xml_opts_in for the hook's standard input). */

#include <stdint.h>
#include <string.h>

#include "qs-launch-domain.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Above the parser's own bound, so its refusal is fuzzed too. */
#define QS_FUZZ_INPUT_MAX (2 * 1024 * 1024)

typedef gboolean (*QsPortUsableFn)(const QsDomainPort *port, const char **why);

/* Every port the parser returns has a name and a path, and is either
 * usable or says why not. */
static void check_port(const QsDomainPort *port, QsPortUsableFn usable)
{
    const char *why = NULL;

    if (!port || !port->name || !port->path) {
        __builtin_trap();
    }
    if (!usable(port, &why) && !why) {
        __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *xml = NULL;
    g_autoptr(QsDomainInfo) info = NULL;
    g_autofree char *name = NULL;
    GError *error = NULL;

    if (size > QS_FUZZ_INPUT_MAX) {
        return 0;
    }
    xml = g_strndup((const char *)data, size);
    info = qs_domain_info_parse(xml, &error);
    if (info) {
        /* A domain we attach to has a name and a display to open. */
        if (error || !info->name ||
            (info->mode == QS_DISPLAY_BUS && !info->bus_address)) {
            __builtin_trap();
        }
        for (guint i = 0; i < info->ports->len; i++) {
            check_port(g_ptr_array_index(info->ports, i), qs_domain_port_usable);
        }
        for (guint i = 0; i < info->redirdevs->len; i++) {
            check_port(g_ptr_array_index(info->redirdevs, i), qs_domain_redirdev_usable);
        }
        if (info->smartcard && (!info->smartcard->name || !info->smartcard->path)) {
            __builtin_trap();
        }
    } else if (!error) {
        __builtin_trap();
    }
    g_clear_error(&error);
    /* The hook's reading shares the parser: where attach read the XML, the
     * hook reads it too, and both see the same opt-in. */
    if (qs_domain_xml_opts_in(xml, &name, &error)) {
        if (error || !name || (info && !info->autostart)) {
            __builtin_trap();
        }
    } else if (info && (error || info->autostart)) {
        __builtin_trap();
    }
    g_clear_error(&error);
    return 0;
}
