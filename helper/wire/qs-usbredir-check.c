/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A client's usbredir stream run through libusbredirparser in qemu's role, with qemu's capabilities, before any of it reaches qemu. */
#include "wire/qs-usbredir-check.h"
#include "wire/qs-client-msg.h"

#include <stdlib.h>
#include <string.h>
#include <usbredirparser.h>

#define HELLO_HEADER 12u        /* a hello's header: before caps, ids are 32 bits */

struct QsUsbredirCheck {
    /* qemu's hello, gathered until whole. */
    guint8 hello[HELLO_HEADER + QS_USBREDIR_MAX_HELLO];
    gsize hello_got;
    struct usbredirparser *parser;      /* once qemu's hello is read */

    /* The client's stream framed on our side: the header being read and
     * the body bytes left, so no packet over the bound is buffered. */
    guint8 header[16];
    gsize header_got;
    guint64 body_left;

    /* What the parser is fed now. */
    const guint8 *seg;
    gsize seg_len;
    gsize seg_off;
    char *parse_error;          /* the parser's last error line */
    gboolean failed;
};

static guint32 get_u32(const guint8 *p)
{
    return (guint32)p[0] | (guint32)p[1] << 8 | (guint32)p[2] << 16 | (guint32)p[3] << 24;
}

/* --- the parser's callbacks: nothing is acted on, data is freed -------- */

static void on_log(void *priv, int level, const char *msg)
{
    QsUsbredirCheck *c = priv;

    if (level <= usbredirparser_error) {
        g_free(c->parse_error);
        c->parse_error = g_strdup(msg);
    }
}

static int on_read(void *priv, uint8_t *data, int count)
{
    QsUsbredirCheck *c = priv;
    gsize n = MIN((gsize)count, c->seg_len - c->seg_off);

    memcpy(data, c->seg + c->seg_off, n);
    c->seg_off += n;
    return (int)n;
}

static int on_write(void *priv, uint8_t *data, int count)
{
    (void)priv, (void)data;
    return count;               /* the parser never sends: no hello, no replies */
}

#define FREE_DATA(name, header_type)                                            \
    static void name(void *priv, uint64_t id, header_type *h, uint8_t *data,    \
                     int data_len)                                              \
    {                                                                           \
        QsUsbredirCheck *c = priv;                                              \
        (void)id, (void)h, (void)data_len;                                      \
        usbredirparser_free_packet_data(c->parser, data);                       \
    }
FREE_DATA(on_control, struct usb_redir_control_packet_header)
FREE_DATA(on_bulk, struct usb_redir_bulk_packet_header)
FREE_DATA(on_iso, struct usb_redir_iso_packet_header)
FREE_DATA(on_interrupt, struct usb_redir_interrupt_packet_header)
FREE_DATA(on_buffered_bulk, struct usb_redir_buffered_bulk_packet_header)

#define IGNORE_STATUS(name, header_type)                                        \
    static void name(void *priv, uint64_t id, header_type *h)                   \
    {                                                                           \
        (void)priv, (void)id, (void)h;                                          \
    }
IGNORE_STATUS(on_configuration_status, struct usb_redir_configuration_status_header)
IGNORE_STATUS(on_alt_setting_status, struct usb_redir_alt_setting_status_header)
IGNORE_STATUS(on_iso_stream_status, struct usb_redir_iso_stream_status_header)
IGNORE_STATUS(on_interrupt_receiving_status, struct usb_redir_interrupt_receiving_status_header)
IGNORE_STATUS(on_bulk_streams_status, struct usb_redir_bulk_streams_status_header)
IGNORE_STATUS(on_bulk_receiving_status, struct usb_redir_bulk_receiving_status_header)

static void on_hello(void *priv, struct usb_redir_hello_header *h)
{
    (void)priv, (void)h;
}

static void on_device_connect(void *priv, struct usb_redir_device_connect_header *h)
{
    (void)priv, (void)h;
}

static void on_interface_info(void *priv, struct usb_redir_interface_info_header *h)
{
    (void)priv, (void)h;
}

static void on_ep_info(void *priv, struct usb_redir_ep_info_header *h)
{
    (void)priv, (void)h;
}

static void on_nothing(void *priv)
{
    (void)priv;
}

static void on_filter(void *priv, struct usbredirfilter_rule *rules, int count)
{
    (void)priv, (void)count;
    free(rules);                /* ours, says usbredirparser.h */
}

/* --- qemu's side --------------------------------------------------------- */

static void start_parser(QsUsbredirCheck *c, const guint8 *caps_bytes, gsize n_caps)
{
    uint32_t caps[USB_REDIR_CAPS_SIZE] = { 0 };
    struct usbredirparser *p = usbredirparser_create();

    for (gsize i = 0; i < MIN(n_caps, (gsize)USB_REDIR_CAPS_SIZE); i++) {
        caps[i] = get_u32(caps_bytes + 4 * i);
    }
    p->priv = c;
    p->log_func = on_log;
    p->read_func = on_read;
    p->write_func = on_write;
    p->hello_func = on_hello;
    p->device_connect_func = on_device_connect;
    p->device_disconnect_func = on_nothing;
    p->interface_info_func = on_interface_info;
    p->ep_info_func = on_ep_info;
    p->configuration_status_func = on_configuration_status;
    p->alt_setting_status_func = on_alt_setting_status;
    p->iso_stream_status_func = on_iso_stream_status;
    p->interrupt_receiving_status_func = on_interrupt_receiving_status;
    p->bulk_streams_status_func = on_bulk_streams_status;
    p->bulk_receiving_status_func = on_bulk_receiving_status;
    p->filter_reject_func = on_nothing;
    p->filter_filter_func = on_filter;
    p->device_disconnect_ack_func = on_nothing;
    p->control_packet_func = on_control;
    p->bulk_packet_func = on_bulk;
    p->iso_packet_func = on_iso;
    p->interrupt_packet_func = on_interrupt;
    p->buffered_bulk_packet_func = on_buffered_bulk;
    c->parser = p;
    /* qemu's role and capabilities; our own hello is not sent anywhere. */
    usbredirparser_init(p, "qemu-spice check", caps, USB_REDIR_CAPS_SIZE,
                        usbredirparser_fl_no_hello);
}

QsUsbredirCheck *qs_usbredir_check_new(void)
{
    return g_new0(QsUsbredirCheck, 1);
}

void qs_usbredir_check_free(QsUsbredirCheck *c)
{
    if (!c) {
        return;
    }
    if (c->parser) {
        usbredirparser_destroy(c->parser);
    }
    g_free(c->parse_error);
    g_free(c);
}

gboolean qs_usbredir_check_ready(QsUsbredirCheck *c)
{
    return c->parser != NULL;
}

gboolean qs_usbredir_check_from_qemu(QsUsbredirCheck *c, const uint8_t *data, gsize len,
                                     GError **error)
{
    gsize want, take;
    guint32 hello_len;

    if (c->parser) {
        return TRUE;
    }
    take = MIN(len, HELLO_HEADER - MIN(c->hello_got, HELLO_HEADER));
    memcpy(c->hello + c->hello_got, data, take);
    c->hello_got += take, data += take, len -= take;
    if (c->hello_got < HELLO_HEADER) {
        return TRUE;
    }
    hello_len = get_u32(c->hello + 4);
    if (get_u32(c->hello) != usb_redir_hello || hello_len < 64 ||
        hello_len > QS_USBREDIR_MAX_HELLO) {
        g_set_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_MALFORMED,
                    "qemu's first usbredir packet is not a hello (type %u, %u bytes)",
                    get_u32(c->hello), hello_len);
        return FALSE;
    }
    want = HELLO_HEADER + hello_len;
    take = MIN(len, want - c->hello_got);
    memcpy(c->hello + c->hello_got, data, take);
    c->hello_got += take;
    if (c->hello_got == want) {
        start_parser(c, c->hello + HELLO_HEADER + 64, (hello_len - 64) / 4);
    }
    return TRUE;
}

/* --- the client's side --------------------------------------------------- */

static gsize header_len(QsUsbredirCheck *c)
{
    struct usbredirparser *p = c->parser;

    return usbredirparser_have_peer_caps(p) &&
           usbredirparser_have_cap(p, usb_redir_cap_64bits_ids) &&
           usbredirparser_peer_has_cap(p, usb_redir_cap_64bits_ids) ? 16 : 12;
}

static gboolean fail(QsUsbredirCheck *c, GError **error, const char *what)
{
    c->failed = TRUE;
    g_set_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_MALFORMED, "%s", what);
    return FALSE;
}

/* Feeds `len` bytes to the parser; FALSE on a parse error. */
static gboolean feed(QsUsbredirCheck *c, const guint8 *data, gsize len, GError **error)
{
    int r;

    c->seg = data;
    c->seg_len = len;
    c->seg_off = 0;
    r = usbredirparser_do_read(c->parser);
    c->seg = NULL;
    if (r == usbredirparser_read_parse_error) {
        g_autofree char *what = g_strdup_printf(
            "the client's usbredir stream has what qemu's usb-redir cannot parse (%s)",
            c->parse_error ? c->parse_error : "no detail");

        return fail(c, error, what);
    }
    return TRUE;
}

gboolean qs_usbredir_check_from_client(QsUsbredirCheck *c, const uint8_t *data, gsize len,
                                       GError **error)
{
    g_return_val_if_fail(c->parser, FALSE);
    if (c->failed) {
        return fail(c, error, "the client's usbredir stream was refused already");
    }
    while (len) {
        gsize take;

        if (c->body_left) {
            take = (gsize)MIN((guint64)len, c->body_left);
            c->body_left -= take;
        } else {
            gsize hl = header_len(c);

            take = MIN(len, hl - c->header_got);
            memcpy(c->header + c->header_got, data, take);
            c->header_got += take;
            if (c->header_got == hl) {
                guint32 plen = get_u32(c->header + 4);

                c->header_got = 0;
                if (plen > QS_USBREDIR_MAX_PACKET) {
                    g_autofree char *what = g_strdup_printf(
                        "the client sent a usbredir packet of %u bytes (type %u); "
                        "at most %u are taken", plen, get_u32(c->header),
                        QS_USBREDIR_MAX_PACKET);

                    return fail(c, error, what);
                }
                c->body_left = plen;
            }
        }
        if (!feed(c, data, take, error)) {
            return FALSE;
        }
        data += take;
        len -= take;
    }
    return TRUE;
}
