/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The port channels' parsers and builders: --port-fd's NAME=FD, the client's spicevmc and port messages, PORT_INIT. */
#include "wire/qs-client-msg.h"
#include "wire/qs-vmc-msg.h"
#include "wire/qs-wire.h"

#include <string.h>
#include <spice/enums.h>
#include <spice/protocol.h>

static void test_port_spec(void)
{
    static const char *const bad[] = {
        "", "=5", "name", "name=", "name=-1", "name=x", "name=2147483648",
        "na me=3", "na/me=3", "name=3 ", "com.redhat.spice.0=3",
    };
    g_autofree char *name = NULL;
    g_autofree char *long_name = g_strnfill(QS_PORT_NAME_MAX + 1, 'a');
    g_autofree char *long_spec = g_strconcat(long_name, "=3", NULL);
    int fd = -1;

    g_assert_true(qs_port_spec_parse("org.spice-space.webdav.0=7", &name, &fd, NULL));
    g_assert_cmpstr(name, ==, QS_PORT_WEBDAV);
    g_assert_cmpint(fd, ==, 7);
    g_clear_pointer(&name, g_free);
    g_assert_true(qs_port_spec_parse("a_b-C.9=2147483647", &name, &fd, NULL));
    g_assert_cmpint(fd, ==, 2147483647);
    g_assert_cmpuint(qs_port_channel_type(QS_PORT_WEBDAV), ==, SPICE_CHANNEL_WEBDAV);
    g_assert_cmpuint(qs_port_channel_type("a_b-C.9"), ==, SPICE_CHANNEL_PORT);
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GError) error = NULL;

        g_assert_false(qs_port_spec_parse(bad[i], &name, &fd, &error));
        g_assert_nonnull(strstr(error->message, "--port-fd"));
    }
    {
        g_autoptr(GError) error = NULL;

        g_assert_false(qs_port_spec_parse(long_spec, &name, &fd, &error));
        g_assert_nonnull(strstr(error->message, "at most"));
    }
}

static void test_msg_parse(void)
{
    QsClientMsg msg;
    g_autoptr(GError) error = NULL;

    g_assert_true(qs_vmc_msg_parse(TRUE, SPICE_MSGC_PORT_EVENT, (const uint8_t *)"\1", 1,
                                   &msg, NULL));
    g_assert_cmpuint(msg.u.port_event, ==, SPICE_PORT_EVENT_CLOSED);
    g_assert_false(qs_vmc_msg_parse(TRUE, SPICE_MSGC_PORT_EVENT, NULL, 0, &msg, &error));
    g_assert_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_MALFORMED);
    g_clear_error(&error);
    /* PORT_EVENT is a port's message only. */
    g_assert_false(qs_vmc_msg_parse(FALSE, SPICE_MSGC_PORT_EVENT, (const uint8_t *)"\1", 1,
                                    &msg, &error));
    g_assert_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_UNKNOWN_TYPE);
    g_clear_error(&error);
    g_assert_true(qs_vmc_msg_parse(FALSE, SPICE_MSGC_SPICEVMC_DATA, (const uint8_t *)"ab", 2,
                                   &msg, NULL));
    g_assert_cmpuint(msg.u.bytes.len, ==, 2);
    g_assert_true(qs_vmc_msg_parse(FALSE, SPICE_MSGC_ACK_SYNC, (const uint8_t *)"abcd", 4,
                                   &msg, NULL));
}

static void test_port_init(void)
{
    g_autoptr(GBytes) b = qs_msg_port_init("org.x", TRUE);
    gsize n;
    const uint8_t *p = g_bytes_get_data(b, &n);

    g_assert_cmpuint(n, ==, 9 + 6);
    g_assert_cmpuint(qs_wire_get_u32(p), ==, 6);
    g_assert_cmpuint(qs_wire_get_u32(p + 4), ==, 9);
    g_assert_cmpuint(p[8], ==, 1);
    g_assert_cmpmem(p + 9, 6, "org.x", 6);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/vmc-msg/port-spec", test_port_spec);
    g_test_add_func("/vmc-msg/msg-parse", test_msg_parse);
    g_test_add_func("/vmc-msg/port-init", test_port_init);
    return g_test_run();
}
