/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qs-usbredir-dev: an emulated USB device on the "usb-host" side of a usbredir stream (stdin/stdout), speaking Debian's libusbredirparser. */
#include <errno.h>
#include <glib.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>
#include <usbredirparser.h>

/*
 * The device: full speed, one vendor-specific interface with no endpoints
 * but ep0, so the guest's kernel enumerates it (descriptors, address,
 * configuration) without a driver binding to it. Vendor 0x1209 is
 * pid.codes, product 0x0001 its test id.
 *
 * On the stream qemu's usb-redir is the "usb-guest": once its hello is in,
 * the device is announced (interface info, endpoint info, connect); then
 * qemu's control transfers are answered from the descriptors below, its
 * configuration and alternate setting requests acknowledged. Lines on
 * stderr say what happened: "hello", "connected", "config N", "request
 * ...", "eof". The stream ending (the SPICE channel closed) ends it.
 */
#define VENDOR 0x1209
#define PRODUCT 0x0001

static const unsigned char device_desc[18] = {
    18, 1, 0x00, 0x02,          /* bLength, DEVICE, bcdUSB 2.00 */
    0, 0, 0, 64,                /* class per interface, ep0 64 bytes */
    VENDOR & 0xff, VENDOR >> 8, PRODUCT & 0xff, PRODUCT >> 8,
    0x00, 0x01, 1, 2, 3, 1,     /* bcdDevice 1.00, strings 1-3, 1 configuration */
};

static const unsigned char config_desc[18] = {
    9, 2, 18, 0, 1, 1, 0, 0x80, 50,     /* 1 interface, bus-powered, 100 mA */
    9, 4, 0, 0, 0, 0xff, 0, 0, 0,       /* interface 0: vendor class, no endpoints */
};

static const char *const strings[] = { NULL, "qemu-spice", "usbredir test device",
                                       "QS0001" };

static struct usbredirparser *parser;
static int configuration;
static gboolean done;

static void log_func(void *priv, int level, const char *msg)
{
    (void)priv;
    if (level <= usbredirparser_warning) {
        g_printerr("parser: %s\n", msg);
    }
}

/* The parser reads until this says 0: only what is there now, so that
 * what its callbacks queued gets written (stdin stays blocking: it may
 * share its file with stdout). */
static int read_func(void *priv, uint8_t *data, int count)
{
    struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
    ssize_t n;

    (void)priv;
    if (poll(&p, 1, 0) == 0) {
        return 0;
    }
    do {
        n = read(STDIN_FILENO, data, (size_t)count);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EAGAIN) {
        return 0;
    }
    if (n <= 0) {
        done = TRUE;
        return -1;
    }
    return (int)n;
}

/* Blocking: the relay reads our stdout all the time. */
static int write_func(void *priv, uint8_t *data, int count)
{
    ssize_t n;

    (void)priv;
    do {
        n = write(STDOUT_FILENO, data, (size_t)count);
    } while (n < 0 && errno == EINTR);
    return n < 0 ? -1 : (int)n;
}

static void announce(void)
{
    struct usb_redir_interface_info_header ifs = { .interface_count = 1 };
    struct usb_redir_ep_info_header eps;
    struct usb_redir_device_connect_header dev = {
        .speed = usb_redir_speed_full,
        .vendor_id = VENDOR,
        .product_id = PRODUCT,
        .device_version_bcd = 0x0100,
    };

    ifs.interface_class[0] = 0xff;
    memset(&eps, 0, sizeof(eps));
    memset(eps.type, usb_redir_type_invalid, sizeof(eps.type));
    /* Index: the endpoint number, +16 for IN; ep0 is both. */
    eps.type[0] = eps.type[16] = usb_redir_type_control;
    eps.max_packet_size[0] = eps.max_packet_size[16] = 64;
    usbredirparser_send_interface_info(parser, &ifs);
    usbredirparser_send_ep_info(parser, &eps);
    usbredirparser_send_device_connect(parser, &dev);
    g_printerr("connected %04x:%04x\n", VENDOR, PRODUCT);
}

static void hello_func(void *priv, struct usb_redir_hello_header *h)
{
    (void)priv;
    g_printerr("hello %.64s\n", h->version);
    announce();
}

/* The descriptor for GET_DESCRIPTOR wValue `value`, into buf; its length,
 * or -1 for a stall. */
static int descriptor(uint16_t value, uint8_t *buf, size_t size)
{
    uint8_t type = value >> 8, index = value & 0xff;

    if (type == 1 && size >= sizeof(device_desc)) {
        memcpy(buf, device_desc, sizeof(device_desc));
        return sizeof(device_desc);
    }
    if (type == 2 && index == 0 && size >= sizeof(config_desc)) {
        memcpy(buf, config_desc, sizeof(config_desc));
        return sizeof(config_desc);
    }
    if (type == 3 && index == 0) {
        static const uint8_t langs[4] = { 4, 3, 0x09, 0x04 };   /* en-US */

        memcpy(buf, langs, sizeof(langs));
        return sizeof(langs);
    }
    if (type == 3 && index < G_N_ELEMENTS(strings)) {
        size_t n = strlen(strings[index]);

        buf[0] = (uint8_t)(2 + 2 * n);
        buf[1] = 3;
        for (size_t i = 0; i < n; i++) {
            buf[2 + 2 * i] = (uint8_t)strings[index][i];
            buf[3 + 2 * i] = 0;
        }
        return buf[0];
    }
    return -1;
}

static void control_packet_func(void *priv, uint64_t id,
                                struct usb_redir_control_packet_header *h,
                                uint8_t *data, int data_len)
{
    struct usb_redir_control_packet_header reply = *h;
    uint8_t buf[256];
    int len = -1;

    (void)priv;
    g_printerr("request type=0x%02x request=0x%02x value=0x%04x index=%u length=%u\n",
               h->requesttype, h->request, h->value, h->index, h->length);
    if (h->requesttype == 0x80 && h->request == 6) {            /* GET_DESCRIPTOR */
        len = descriptor(h->value, buf, sizeof(buf));
    } else if ((h->requesttype & 0x80) && h->request == 0) {    /* GET_STATUS */
        buf[0] = buf[1] = 0;
        len = 2;
    } else if (!(h->requesttype & 0x80)) {
        len = 0;                                                /* OUT: accepted */
    }
    if (len < 0) {
        reply.status = usb_redir_stall;
        reply.length = 0;
        usbredirparser_send_control_packet(parser, id, &reply, NULL, 0);
    } else if (h->requesttype & 0x80) {
        reply.status = usb_redir_success;
        reply.length = (uint16_t)MIN(len, h->length);
        usbredirparser_send_control_packet(parser, id, &reply, buf, reply.length);
    } else {
        reply.status = usb_redir_success;
        usbredirparser_send_control_packet(parser, id, &reply, NULL, 0);
    }
    if (data) {
        usbredirparser_free_packet_data(parser, data);
    }
    (void)data_len;
}

static void set_configuration_func(void *priv, uint64_t id,
                                   struct usb_redir_set_configuration_header *h)
{
    struct usb_redir_configuration_status_header st = { usb_redir_success, h->configuration };

    (void)priv;
    configuration = h->configuration;
    g_printerr("config %d\n", configuration);
    usbredirparser_send_configuration_status(parser, id, &st);
}

static void get_configuration_func(void *priv, uint64_t id)
{
    struct usb_redir_configuration_status_header st = { usb_redir_success,
                                                        (uint8_t)configuration };

    (void)priv;
    usbredirparser_send_configuration_status(parser, id, &st);
}

static void set_alt_setting_func(void *priv, uint64_t id,
                                 struct usb_redir_set_alt_setting_header *h)
{
    struct usb_redir_alt_setting_status_header st = { usb_redir_success, h->interface, 0 };

    (void)priv;
    st.status = h->interface == 0 && h->alt == 0 ? usb_redir_success : usb_redir_inval;
    usbredirparser_send_alt_setting_status(parser, id, &st);
}

static void get_alt_setting_func(void *priv, uint64_t id,
                                 struct usb_redir_get_alt_setting_header *h)
{
    struct usb_redir_alt_setting_status_header st = { usb_redir_success, h->interface, 0 };

    (void)priv;
    if (h->interface != 0) {
        st.status = usb_redir_inval;
    }
    usbredirparser_send_alt_setting_status(parser, id, &st);
}

static void reset_func(void *priv)
{
    (void)priv;
    configuration = 0;
    g_printerr("reset\n");
}

static void cancel_func(void *priv, uint64_t id)
{
    (void)priv, (void)id;       /* every transfer is answered at once */
}

int main(int argc, char **argv)
{
    uint32_t caps[USB_REDIR_CAPS_SIZE] = { 0 };

    if (argc != 1) {
        g_printerr("usage: %s  (the usbredir stream on stdin and stdout)\n", argv[0]);
        return 2;
    }
    parser = usbredirparser_create();
    parser->log_func = log_func;
    parser->read_func = read_func;
    parser->write_func = write_func;
    parser->hello_func = hello_func;
    parser->control_packet_func = control_packet_func;
    parser->set_configuration_func = set_configuration_func;
    parser->get_configuration_func = get_configuration_func;
    parser->set_alt_setting_func = set_alt_setting_func;
    parser->get_alt_setting_func = get_alt_setting_func;
    parser->reset_func = reset_func;
    parser->cancel_data_packet_func = cancel_func;
    usbredirparser_caps_set_cap(caps, usb_redir_cap_connect_device_version);
    usbredirparser_caps_set_cap(caps, usb_redir_cap_ep_info_max_packet_size);
    usbredirparser_caps_set_cap(caps, usb_redir_cap_64bits_ids);
    usbredirparser_caps_set_cap(caps, usb_redir_cap_32bits_bulk_length);
    usbredirparser_init(parser, "qs-usbredir-dev", caps, USB_REDIR_CAPS_SIZE,
                        usbredirparser_fl_usb_host);
    while (!done) {
        struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };

        while (usbredirparser_has_data_to_write(parser)) {
            if (usbredirparser_do_write(parser) < 0) {
                g_printerr("write error\n");
                return 1;
            }
        }
        if (poll(&p, 1, -1) < 0 && errno != EINTR) {
            return 1;
        }
        if (usbredirparser_do_read(parser) < 0 && !done) {
            g_printerr("protocol error\n");
            return 1;
        }
    }
    g_printerr("eof\n");
    usbredirparser_destroy(parser);
    return 0;
}
