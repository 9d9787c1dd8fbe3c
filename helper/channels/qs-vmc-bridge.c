/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A chardev bridged to a SPICE spicevmc channel: SPICEVMC_DATA both ways, each side read only while the other side's queue has room; for usbredir, one chardev connection per client channel; for smartcard, VSCard messages checked and translated. */
#include "channels/qs-vmc-bridge.h"
#include "channels/qs-channel.h"
#include "wire/qs-smartcard-check.h"
#include "wire/qs-usbredir-check.h"

#include <spice/enums.h>

struct QsVmcBridge {
    QsChardev *chardev;
    uint8_t channel_type;
    uint8_t channel_id;
    QsChannel *ch;              /* the attached client channel, or NULL */
    QsVmcBridgeStateFunc qemu_state;    /* the attached channel's */
    gboolean told_dropped;      /* since qemu's end last opened */
    /* usbredir: qemu's usb-redir sends its hello once per chardev
     * connection and takes the device away when it closes, so each client
     * channel gets a connection of its own: qemu's is taken only while a
     * channel is attached and ended when it goes. */
    gboolean per_client;
    GByteArray *pending;        /* per_client: the client's bytes before qemu's hello */
    QsUsbredirCheck *check;     /* per_client: of the current chardev connection */
    QsSmartcardCheck *card;     /* smartcard: the VSCard messages both ways */
    QsVmcBridgeStats stats;
};

/* The one place that decides who reads: qemu while the client's queue has
 * room, the client while qemu's has. */
static void steer(QsVmcBridge *b)
{
    gboolean client_room = b->ch && !qs_conn_is_closed(b->ch->conn) &&
                           qs_conn_get_queued_bytes(b->ch->conn) < QS_VMC_CLIENT_QUEUE;

    qs_chardev_set_reading(b->chardev, client_room);
    if (b->ch) {
        qs_conn_set_reading(b->ch->conn, qs_chardev_get_queued(b->chardev) +
                                         b->pending->len < QS_VMC_QEMU_QUEUE);
    }
}

/* per_client: the client's bytes go to qemu only as far as qemu's
 * usb-redir can parse them (qs-usbredir-check.h says why); otherwise the
 * client's channel is closed and qemu gets none of them. */
static void to_qemu_checked(QsVmcBridge *b, const uint8_t *data, gsize len)
{
    g_autoptr(GError) error = NULL;

    if (!qs_usbredir_check_from_client(b->check, data, len, &error)) {
        g_message("%s: %s; closing the client's channel", qs_vmc_bridge_get_name(b),
                  error->message);
        qs_channel_close(b->ch, error->message);
        return;
    }
    qs_chardev_write(b->chardev, data, len);
    b->stats.to_qemu += len;
}

static void watch_qemu_hello(QsVmcBridge *b, const guint8 *data, gsize len)
{
    g_autoptr(GError) error = NULL;

    if (!qs_usbredir_check_from_qemu(b->check, data, len, &error)) {
        g_message("%s: %s; closing the client's channel", qs_vmc_bridge_get_name(b),
                  error->message);
        qs_channel_close(b->ch, error->message);
        return;
    }
    if (qs_usbredir_check_ready(b->check) && b->pending->len) {
        g_autoptr(GByteArray) early = g_steal_pointer(&b->pending);

        b->pending = g_byte_array_new();
        to_qemu_checked(b, early->data, early->len);
    }
}

/* smartcard: qemu's stream cut into messages, each its own SMARTCARD_DATA. */
static void card_from_qemu(QsVmcBridge *b, const guint8 *data, gsize len)
{
    g_autoptr(GPtrArray) msgs = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);

    qs_smartcard_check_from_qemu(b->card, data, len, msgs);
    for (guint i = 0; i < msgs->len; i++) {
        GBytes *m = g_ptr_array_index(msgs, i);
        gsize n = g_bytes_get_size(m);

        if (qs_channel_send(b->ch, SPICE_MSG_SMARTCARD_DATA, g_bytes_ref(m))) {
            b->stats.to_client += n;
        }
    }
}

/* What the smartcard check made for qemu; dropped (and said once) while
 * qemu's end is closed. */
static void card_to_qemu(QsVmcBridge *b, GByteArray *out)
{
    if (!out->len) {
        return;
    }
    if (!qs_chardev_write(b->chardev, out->data, out->len)) {
        if (!b->told_dropped) {
            b->told_dropped = TRUE;
            g_message("%s: qemu's end is closed; the client's smartcard messages are dropped",
                      qs_vmc_bridge_get_name(b));
        }
        b->stats.dropped += out->len;
        return;
    }
    b->stats.to_qemu += out->len;
}

static void card_from_client(QsVmcBridge *b, const uint8_t *data, gsize len)
{
    g_autoptr(GByteArray) out = g_byte_array_new();
    g_autoptr(GPtrArray) replies = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    g_autoptr(GError) error = NULL;
    gboolean had_reader = qs_smartcard_check_reader_added(b->card);

    if (!qs_smartcard_check_from_client(b->card, data, len, out, replies, &error)) {
        g_message("%s: %s; closing the client's channel", qs_vmc_bridge_get_name(b),
                  error->message);
        qs_channel_close(b->ch, error->message);
        return;
    }
    if (had_reader != qs_smartcard_check_reader_added(b->card)) {
        g_message("%s: the client %s its reader", qs_vmc_bridge_get_name(b),
                  had_reader ? "removed" : "added");
    }
    card_to_qemu(b, out);
    for (guint i = 0; i < replies->len; i++) {
        qs_channel_send(b->ch, SPICE_MSG_SMARTCARD_DATA,
                        g_bytes_ref(g_ptr_array_index(replies, i)));
    }
}

static void on_data(QsChardev *cd, const guint8 *data, gsize len, gpointer user_data)
{
    QsVmcBridge *b = user_data;

    (void)cd;
    if (!b->ch) {
        return;                 /* not reading without a channel: cannot happen */
    }
    if (b->card) {
        card_from_qemu(b, data, len);
        steer(b);
        return;
    }
    if (b->per_client && !qs_usbredir_check_ready(b->check)) {
        watch_qemu_hello(b, data, len);
    }
    if (qs_channel_send(b->ch, SPICE_MSG_SPICEVMC_DATA, g_bytes_new(data, len))) {
        b->stats.to_client += len;
    }
    steer(b);
}

static void on_drained(QsChardev *cd, gpointer user_data)
{
    (void)cd;
    steer(user_data);
}

static void on_opened(QsChardev *cd, gpointer user_data)
{
    QsVmcBridge *b = user_data;

    (void)cd;
    b->told_dropped = FALSE;
    if (b->card) {
        qs_smartcard_check_qemu_reset(b->card);
    }
    if (b->per_client) {
        /* Each connection starts with qemu's hello. */
        qs_usbredir_check_free(b->check);
        b->check = qs_usbredir_check_new();
    }
    if (b->ch) {
        b->qemu_state(b->ch, TRUE);
    }
    steer(b);
}

static void on_closed(QsChardev *cd, const char *reason, gboolean for_good,
                      gpointer user_data)
{
    QsVmcBridge *b = user_data;

    (void)cd, (void)for_good;
    g_clear_pointer(&b->check, qs_usbredir_check_free);
    if (b->ch && b->per_client) {
        /* The client's usbredir parser spoke to the connection that went:
         * a new one needs a new client channel. */
        QsChannel *ch = g_steal_pointer(&b->ch);
        g_autofree char *why = g_strdup_printf("qemu's usb-redir chardev %s closed (%s)",
                                               qs_vmc_bridge_get_name(b), reason);

        qs_chardev_set_accepting(b->chardev, FALSE);
        qs_channel_close(ch, why);
    } else if (b->ch) {
        b->qemu_state(b->ch, FALSE);
    }
    steer(b);
}

QsVmcBridge *qs_vmc_bridge_new(QsChardev *chardev, uint8_t channel_type,
                               uint8_t channel_id)
{
    static const QsChardevHandlers handlers = {
        .data = on_data,
        .drained = on_drained,
        .opened = on_opened,
        .closed = on_closed,
    };
    QsVmcBridge *b = g_new0(QsVmcBridge, 1);

    b->chardev = chardev;
    b->channel_type = channel_type;
    b->channel_id = channel_id;
    b->per_client = channel_type == SPICE_CHANNEL_USBREDIR;
    if (channel_type == SPICE_CHANNEL_SMARTCARD) {
        b->card = qs_smartcard_check_new();
    }
    b->pending = g_byte_array_new();
    if (b->per_client) {
        qs_chardev_set_accepting(chardev, FALSE);
    }
    /* drained fires when qemu's queue falls below the mark the client's
     * reading stops at. */
    qs_chardev_set_low_water(chardev, QS_VMC_QEMU_QUEUE);
    qs_chardev_set_handlers(chardev, &handlers, b);
    return b;
}

void qs_vmc_bridge_free(QsVmcBridge *b)
{
    if (!b) {
        return;
    }
    /* A channel still attached only keeps a pointer it will not use: the
     * session detaches its channels before the bridges go. */
    g_warn_if_fail(b->ch == NULL);
    qs_chardev_free(b->chardev);
    qs_usbredir_check_free(b->check);
    qs_smartcard_check_free(b->card);
    g_byte_array_unref(b->pending);
    g_free(b);
}

const char *qs_vmc_bridge_get_name(QsVmcBridge *b)
{
    return qs_chardev_get_name(b->chardev);
}

uint8_t qs_vmc_bridge_get_channel_type(QsVmcBridge *b)
{
    return b->channel_type;
}

uint8_t qs_vmc_bridge_get_channel_id(QsVmcBridge *b)
{
    return b->channel_id;
}

gboolean qs_vmc_bridge_is_open(QsVmcBridge *b)
{
    return qs_chardev_is_open(b->chardev);
}

void qs_vmc_bridge_attach(QsVmcBridge *b, QsChannel *ch, QsVmcBridgeStateFunc qemu_state)
{
    if (b->ch && b->ch != ch) {
        /* Its closing detaches nothing: the bridge is no longer its. */
        qs_channel_close(g_steal_pointer(&b->ch), "a newer channel took this chardev");
    }
    if (b->per_client) {
        g_byte_array_set_size(b->pending, 0);
        if (qs_chardev_is_open(b->chardev)) {
            qs_chardev_disconnect(b->chardev, "a newer client channel takes the device");
        }
        qs_chardev_set_accepting(b->chardev, TRUE);
    }
    b->ch = ch;
    b->qemu_state = qemu_state;
    /* writable fires when the client's queue falls below our mark. */
    qs_conn_set_queue_limits(ch->conn, QS_VMC_CLIENT_QUEUE, QS_CONN_DEFAULT_HARD_CAP);
    qs_conn_set_max_message_size(ch->conn, QS_VMC_MAX_CLIENT_MESSAGE);
    steer(b);
}

void qs_vmc_bridge_detach(QsVmcBridge *b, QsChannel *ch)
{
    if (b->ch == ch) {
        b->ch = NULL;
        if (b->card) {
            /* As spice-server: the reader goes with its client. */
            g_autoptr(GByteArray) out = g_byte_array_new();

            qs_smartcard_check_client_gone(b->card, out);
            if (out->len) {
                g_message("%s: the client's reader is removed with its channel",
                          qs_vmc_bridge_get_name(b));
            }
            card_to_qemu(b, out);
        }
        if (b->per_client) {
            /* qemu's usb-redir takes the device out of the guest. */
            g_byte_array_set_size(b->pending, 0);
            qs_chardev_set_accepting(b->chardev, FALSE);
            if (qs_chardev_is_open(b->chardev)) {
                qs_chardev_disconnect(b->chardev, "the client's usbredir channel ended");
            }
        }
        steer(b);
    }
}

QsChannel *qs_vmc_bridge_get_channel(QsVmcBridge *b)
{
    return b->ch;
}

void qs_vmc_bridge_from_client(QsVmcBridge *b, const uint8_t *data, gsize len)
{
    if (len == 0 || (b->per_client && (!b->ch || qs_conn_is_closed(b->ch->conn)))) {
        return;                 /* a refused stream's later bytes go nowhere */
    }
    if (b->per_client && !(b->check && qs_usbredir_check_ready(b->check))) {
        /* Bounded by steer(): the client is read only below the mark. */
        g_byte_array_append(b->pending, data, (guint)len);
        steer(b);
        return;
    }
    if (b->per_client) {
        to_qemu_checked(b, data, len);
        steer(b);
        return;
    }
    if (b->card) {
        if (!qs_conn_is_closed(b->ch->conn)) {
            card_from_client(b, data, len);
        }
        steer(b);
        return;
    }
    if (!qs_chardev_write(b->chardev, data, len)) {
        /* As spice-server does with a closed device: the bytes have
         * nowhere to go. Said once each time qemu's end is closed. */
        if (!b->told_dropped) {
            b->told_dropped = TRUE;
            g_message("%s: qemu's end is closed; the client's bytes are dropped",
                      qs_vmc_bridge_get_name(b));
        }
        b->stats.dropped += len;
        return;
    }
    b->stats.to_qemu += len;
    steer(b);
}

void qs_vmc_bridge_client_writable(QsVmcBridge *b)
{
    steer(b);
}

void qs_vmc_bridge_get_stats(QsVmcBridge *b, QsVmcBridgeStats *stats)
{
    *stats = b->stats;
}
