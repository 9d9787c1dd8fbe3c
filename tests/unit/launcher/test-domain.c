/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of the domain XML decision: p2p, bus, other graphics, metadata. */

#include <string.h>
#include <gio/gio.h>
#include "qs-launch-domain.h"

#define HEAD "<domain type='qemu' id='3'><name>vm1</name>" \
             "<uuid>0b4d1f3e-7a2c-4c57-9b1e-1d2a3b4c5d6e</uuid>"

static void test_p2p(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(QsDomainInfo) i = qs_domain_info_parse(
        HEAD "<devices><graphics type='vnc' port='5900'/>"
        "<graphics type='dbus' p2p='yes'/></devices></domain>", &err);

    g_assert_no_error(err);
    g_assert_cmpint(i->mode, ==, QS_DISPLAY_P2P);
    g_assert_cmpuint(i->graphics_index, ==, 1);
    g_assert_cmpstr(i->name, ==, "vm1");
    g_assert_cmpstr(i->uuid, ==, "0b4d1f3e-7a2c-4c57-9b1e-1d2a3b4c5d6e");
    g_assert_cmpint(i->id, ==, 3);
    g_assert_false(i->autostart);
}

/* The virtio-serial ports on unix sockets, as libvirt writes them in the
 * live XML, and which of them the launcher passes on. */
static void test_ports(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(QsDomainInfo) i = qs_domain_info_parse(
        HEAD "<devices><graphics type='dbus' p2p='yes'/>"
        "<channel type='unix'><source mode='bind' path='/run/libvirt/qemu/channel/3-vm1/org.qemu.guest_agent.0'/>"
        "<target type='virtio' name='org.qemu.guest_agent.0' state='connected'/>"
        "<alias name='channel0'/><address type='virtio-serial' controller='0' bus='0' port='1'/></channel>"
        "<channel type='unix'><source mode='bind' path='/var/lib/libvirt/qemu/webdav.sock'/>"
        "<target type='virtio' name='org.spice-space.webdav.0'/></channel>"
        "<channel type='spicevmc'><target type='virtio' name='com.redhat.spice.0'/></channel>"
        "<channel type='unix'><source mode='connect' path='/tmp/out.sock'/>"
        "<target type='virtio' name='org.example.out'/></channel>"
        "<channel type='unix'><source path='/tmp/nomode.sock'/>"
        "<target type='virtio' name='org.example.nomode'/></channel>"
        "<channel type='unix'><source mode='bind' path='/tmp/g.sock'/>"
        "<target type='guestfwd' address='10.0.2.1' port='4600'/></channel>"
        "<channel type='unix'><source mode='bind' path='/tmp/agent.sock'/>"
        "<target type='virtio' name='com.redhat.spice.0'/></channel>"
        "<channel type='unix'><source mode='bind' path='/tmp/bad.sock'/>"
        "<target type='virtio' name='bad name'/></channel>"
        "<serial type='unix'><source mode='bind' path='/tmp/serial.sock'/>"
        "<target port='0'/></serial>"
        "</devices></domain>", &err);
    static const struct {
        const char *name, *path;
        gboolean listens, usable;
        const char *why;
    } want[] = {
        { "org.qemu.guest_agent.0", "/run/libvirt/qemu/channel/3-vm1/org.qemu.guest_agent.0",
          TRUE, FALSE, "libvirt itself" },
        { "org.spice-space.webdav.0", "/var/lib/libvirt/qemu/webdav.sock", TRUE, TRUE, NULL },
        { "org.example.out", "/tmp/out.sock", FALSE, FALSE, "mode='connect'" },
        { "org.example.nomode", "/tmp/nomode.sock", TRUE, TRUE, NULL },
        { "com.redhat.spice.0", "/tmp/agent.sock", TRUE, TRUE, NULL },
        { "bad name", "/tmp/bad.sock", TRUE, FALSE, "letters, digits" },
    };

    g_assert_no_error(err);
    g_assert_cmpuint(i->ports->len, ==, G_N_ELEMENTS(want));
    for (guint k = 0; k < G_N_ELEMENTS(want); k++) {
        const QsDomainPort *port = g_ptr_array_index(i->ports, k);
        const char *why = NULL;

        g_assert_cmpstr(port->name, ==, want[k].name);
        g_assert_cmpstr(port->path, ==, want[k].path);
        g_assert_cmpint(port->qemu_listens, ==, want[k].listens);
        g_assert_cmpint(qs_domain_port_usable(port, &why), ==, want[k].usable);
        if (want[k].why) {
            g_assert_nonnull(strstr(why, want[k].why));
        } else {
            g_assert_null(why);
        }
    }
}

/* <redirdev bus='usb' type='unix'>: numbered in document order, usable
 * only where qemu connects (no mode is libvirt's connect). */
static void test_redirdevs(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(QsDomainInfo) i = qs_domain_info_parse(
        HEAD "<devices><graphics type='dbus' p2p='yes'/>"
        "<redirdev bus='usb' type='unix'><source mode='connect' path='/run/u0.sock'>"
        "<reconnect enabled='yes' timeout='1'/></source>"
        "<alias name='redir0'/><address type='usb' bus='0' port='2'/></redirdev>"
        "<redirdev bus='usb' type='spicevmc'><alias name='redir1'/></redirdev>"
        "<redirdev type='unix'><source mode='bind' path='/run/u1.sock'/></redirdev>"
        "<redirdev bus='usb' type='unix'><source path='/run/u2.sock'/></redirdev>"
        "<channel type='unix'><source mode='bind' path='/tmp/p.sock'/>"
        "<target type='virtio' name='org.example.p'/></channel>"
        "</devices>"
        "<seclabel type='dynamic' model='selinux' relabel='yes'>"
        "<label>system_u:system_r:svirt_t:s0:c1,c2</label></seclabel>"
        "<seclabel type='dynamic' model='dac' relabel='yes'>"
        "<label>+64055:+108</label><imagelabel>+64055:+108</imagelabel></seclabel>"
        "</domain>", &err);
    static const struct {
        const char *name, *path;
        gboolean usable;
    } want[] = {
        { "usbredir.0", "/run/u0.sock", TRUE },
        { "usbredir.1", "/run/u1.sock", FALSE },
        { "usbredir.2", "/run/u2.sock", TRUE },
    };

    g_assert_no_error(err);
    g_assert_cmpint(i->qemu_uid, ==, 64055);
    g_assert_cmpint(i->qemu_gid, ==, 108);
    g_assert_cmpuint(i->ports->len, ==, 1);
    g_assert_cmpuint(i->redirdevs->len, ==, G_N_ELEMENTS(want));
    for (guint k = 0; k < G_N_ELEMENTS(want); k++) {
        const QsDomainPort *dev = g_ptr_array_index(i->redirdevs, k);
        const char *why = NULL;

        g_assert_cmpstr(dev->name, ==, want[k].name);
        g_assert_cmpstr(dev->path, ==, want[k].path);
        g_assert_cmpint(qs_domain_redirdev_usable(dev, &why), ==, want[k].usable);
        g_assert_true(want[k].usable ? why == NULL : strstr(why, "mode='connect'") != NULL);
    }
}

/* <smartcard mode='passthrough' type='unix'>: the first one, either
 * way round; host-certificates and spicevmc cards are not ours. */
static void test_smartcard(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(QsDomainInfo) i = qs_domain_info_parse(
        HEAD "<devices><graphics type='dbus' p2p='yes'/>"
        "<smartcard mode='host-certificates'><certificate>a</certificate></smartcard>"
        "<smartcard mode='passthrough' type='spicevmc'/>"
        "<smartcard mode='passthrough' type='unix'><source mode='bind' path='/run/sc0.sock'/>"
        "<alias name='smartcard0'/><address type='ccid' controller='0' slot='0'/></smartcard>"
        "<smartcard mode='passthrough' type='unix'><source path='/run/sc1.sock'/></smartcard>"
        "</devices></domain>", &err);
    g_autoptr(QsDomainInfo) j = qs_domain_info_parse(
        HEAD "<devices><graphics type='dbus' p2p='yes'/>"
        "<smartcard mode='passthrough' type='unix'><source mode='connect' path='/run/sc.sock'>"
        "<reconnect enabled='yes' timeout='1'/></source></smartcard>"
        "</devices></domain>", NULL);
    g_autoptr(QsDomainInfo) none = qs_domain_info_parse(
        HEAD "<devices><graphics type='dbus' p2p='yes'/></devices></domain>", NULL);

    g_assert_no_error(err);
    g_assert_nonnull(i->smartcard);
    g_assert_cmpstr(i->smartcard->name, ==, "smartcard");
    g_assert_cmpstr(i->smartcard->path, ==, "/run/sc0.sock");
    g_assert_true(i->smartcard->qemu_listens);
    g_assert_cmpuint(i->extra_smartcards, ==, 1);
    g_assert_cmpstr(j->smartcard->path, ==, "/run/sc.sock");
    g_assert_false(j->smartcard->qemu_listens);
    g_assert_cmpuint(j->extra_smartcards, ==, 0);
    g_assert_null(none->smartcard);
}

static void test_bus(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(QsDomainInfo) i = qs_domain_info_parse(
        HEAD "<devices><graphics type='dbus' "
        "address='unix:path=/run/libvirt/qemu/dbus/3-vm1-dbus.sock'/>"
        "</devices></domain>", &err);

    g_assert_no_error(err);
    g_assert_cmpint(i->mode, ==, QS_DISPLAY_BUS);
    g_assert_cmpint(i->qemu_uid, ==, -1);       /* no DAC label: not known */
    g_assert_cmpstr(i->bus_path, ==, "/run/libvirt/qemu/dbus/3-vm1-dbus.sock");
    g_assert_cmpstr(i->bus_address, ==,
                    "unix:path=/run/libvirt/qemu/dbus/3-vm1-dbus.sock");
}

static const struct {
    const char *xml;
    int code;
    const char *expect;
} bad[] = {
    { HEAD "<devices><graphics type='spice' port='5900'/></devices></domain>",
      G_IO_ERROR_NOT_SUPPORTED,
      "domain 'vm1' has no D-Bus display (only spice graphics): add "
      "<graphics type='dbus' p2p='yes'/>" },
    { HEAD "<devices/></domain>", G_IO_ERROR_NOT_SUPPORTED,
      "domain 'vm1' has no D-Bus display: add" },
    { "<domain><name>off</name><devices><graphics type='dbus'/></devices>"
      "</domain>", G_IO_ERROR_NOT_CONNECTED, "domain 'off' is not running" },
    { HEAD "<devices><graphics type='dbus'/></devices></domain>",
      G_IO_ERROR_NOT_SUPPORTED, "neither p2p='yes' nor a bus address" },
    { HEAD "<devices><graphics type='dbus' address='tcp:host=x,port=1'/>"
      "</devices></domain>", G_IO_ERROR_NOT_SUPPORTED, "is not 'unix:path=" },
    { HEAD "<devices><graphics type='dbus' address='unix:path=rel'/>"
      "</devices></domain>", G_IO_ERROR_NOT_SUPPORTED, "is not 'unix:path=" },
    /* graphics outside <devices> do not count */
    { HEAD "<graphics type='dbus' p2p='yes'/></domain>",
      G_IO_ERROR_NOT_SUPPORTED, "has no D-Bus display" },
};

static void test_errors(void)
{
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GError) err = NULL;
        g_autoptr(QsDomainInfo) info = qs_domain_info_parse(bad[i].xml, &err);

        g_assert_null(info);
        if (!err || !g_error_matches(err, G_IO_ERROR, bad[i].code) ||
            !strstr(err->message, bad[i].expect)) {
            g_error("case %u: got '%s', expected '%s'", i,
                    err ? err->message : "success", bad[i].expect);
        }
    }
}

static void test_malformed(void)
{
    const char *cases[] = { "<domain><name>x</name>", "not xml",
                            "<domain><devices/></domain>", "" };

    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) err = NULL;
        g_autoptr(QsDomainInfo) info = qs_domain_info_parse(cases[i], &err);

        g_assert_null(info);
        g_assert_nonnull(err);
        g_assert_true(g_str_has_prefix(err->message, "domain XML"));
    }
}

static void test_metadata_opt_in(void)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *name = NULL;
    const char *yes_prefixed = HEAD "<metadata><qemu-spice:console "
        "xmlns:qemu-spice='" QS_METADATA_URI "' autostart='yes'/></metadata>"
        "<devices><graphics type='dbus' p2p='yes'/></devices></domain>";
    const char *yes_default = HEAD "<metadata><console xmlns='" QS_METADATA_URI
        "' autostart='yes'/></metadata></domain>";
    const char *other_ns = HEAD "<metadata><x:console xmlns:x='urn:other' "
        "autostart='yes'/></metadata></domain>";
    const char *no = HEAD "<metadata><q:console xmlns:q='" QS_METADATA_URI
        "' autostart='no'/></metadata></domain>";
    g_autoptr(QsDomainInfo) i = qs_domain_info_parse(yes_prefixed, &err);

    g_assert_no_error(err);
    g_assert_true(i->autostart);
    g_assert_true(qs_domain_xml_opts_in(yes_prefixed, &name, &err));
    g_assert_cmpstr(name, ==, "vm1");
    g_assert_true(qs_domain_xml_opts_in(yes_default, NULL, &err));
    g_assert_false(qs_domain_xml_opts_in(other_ns, NULL, &err));
    g_assert_false(qs_domain_xml_opts_in(no, NULL, &err));
    g_assert_no_error(err);
}

static void test_metadata_xml(void)
{
    QsConsoleMeta m = {
        .autostart = TRUE, .host = "h<1>", .port = 5900, .tls_port = 5901,
        .ticket_file = "/run/qemu-spice/vm1.ticket", .ticket_expiry = 1700000000,
        .pid = 42, .restarts = 2, .started = 1600000000,
    };
    QsConsoleMeta optin = { .autostart = TRUE };
    g_autofree char *x = qs_console_metadata_xml(&m);
    g_autofree char *o = qs_console_metadata_xml(&optin);

    g_assert_cmpstr(x, ==, "<console autostart='yes' type='spice' "
                    "host='h&lt;1&gt;' port='5900' tls-port='5901' "
                    "ticket-file='/run/qemu-spice/vm1.ticket' "
                    "ticket-expiry='1700000000' pid='42' restarts='2' "
                    "started='1600000000'/>");
    g_assert_cmpstr(o, ==, "<console autostart='yes'/>");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/launcher/domain/p2p", test_p2p);
    g_test_add_func("/launcher/domain/bus", test_bus);
    g_test_add_func("/launcher/domain/ports", test_ports);
    g_test_add_func("/launcher/domain/redirdevs", test_redirdevs);
    g_test_add_func("/launcher/domain/smartcard", test_smartcard);
    g_test_add_func("/launcher/domain/errors", test_errors);
    g_test_add_func("/launcher/domain/malformed", test_malformed);
    g_test_add_func("/launcher/domain/metadata-opt-in", test_metadata_opt_in);
    g_test_add_func("/launcher/domain/metadata-xml", test_metadata_xml);
    return g_test_run();
}
