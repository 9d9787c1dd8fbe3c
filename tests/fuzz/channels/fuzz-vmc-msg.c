/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: what the helper parses for its chardev bridges: a spicevmc or port channel's client messages, and --port-fd's NAME=FD. */
#include "wire/qs-client-msg.h"
#include "wire/qs-vmc-msg.h"
#include "wire/qs-wire.h"

#include <string.h>
#include <spice/enums.h>

static volatile uint32_t fuzz_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A spec that parses names a valid port, and its PORT_INIT carries it. */
static void port_spec(const uint8_t *data, size_t size)
{
    g_autofree char *text = g_strndup((const char *)data, size);
    g_autofree char *name = NULL;
    GError *error = NULL;
    int fd = -1;

    if (qs_port_spec_parse(text, &name, &fd, &error)) {
        g_autoptr(GBytes) init = qs_msg_port_init(name, fd & 1);
        gsize n, len = strlen(name);
        const uint8_t *p = g_bytes_get_data(init, &n);

        if (error || fd < 0 || len == 0 || len > QS_PORT_NAME_MAX ||
            strcmp(name, QS_PORT_AGENT) == 0 || n != 9 + len + 1 ||
            qs_wire_get_u32(p) != len + 1 || qs_wire_get_u32(p + 4) != 9 ||
            p[8] != (fd & 1) || memcmp(p + 9, name, len + 1) != 0) {
            __builtin_trap();
        }
        for (gsize i = 0; i < len; i++) {
            if (!g_ascii_isalnum(name[i]) && !strchr("._-", name[i])) {
                __builtin_trap();
            }
        }
    } else if (!error || !strstr(error->message, "--port-fd")) {
        __builtin_trap();           /* a failure names the option */
    }
    g_clear_error(&error);
}

static void client_msg(gboolean port, const uint8_t *data, size_t size)
{
    QsClientMsg msg;
    GError *error = NULL;
    uint16_t type;
    uint8_t *body;

    if (size < 2) {
        return;
    }
    type = (uint16_t)(data[0] | data[1] << 8);
    body = g_memdup2(data + 2, size - 2);
    if (qs_vmc_msg_parse(port, type, size > 2 ? body : NULL, size - 2, &msg, &error)) {
        if (error || (type == SPICE_MSGC_PORT_EVENT && !port)) {
            __builtin_trap();
        }
        if (type == SPICE_MSGC_SPICEVMC_DATA) {
            if (msg.u.bytes.len != size - 2) {
                __builtin_trap();
            }
            for (uint32_t i = 0; i < msg.u.bytes.len; i++) {
                fuzz_sink += msg.u.bytes.data[i];
            }
        }
    } else if (!error || error->domain != QS_CHANNEL_ERROR) {
        __builtin_trap();
    }
    g_clear_error(&error);
    g_free(body);
}

/* Input: one byte choosing what to parse (0 NAME=FD, 1 a spicevmc
 * channel's message, 2 a port channel's), then the text or u16 type + body. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    switch (data[0] % 3) {
    case 0:
        port_spec(data + 1, size - 1);
        break;
    default:
        client_msg(data[0] % 3 == 2, data + 1, size - 1);
        break;
    }
    return 0;
}
