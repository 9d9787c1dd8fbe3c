/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The inputs channel: keys (set-1 scancodes) and mouse events to qemu, lock-key state both ways. */
#include "channels/qs-inputs-channel.h"
#include "wire/qs-msg.h"
#include "wire/qs-scancode.h"
#include "channels/qs-session.h"
#include "display/qs-input-map.h"

#include <spice/enums.h>

/* spice-gtk stops sending motion after 2 x 4 unacknowledged messages
 * (SPICE_INPUT_MOTION_ACK_BUNCH); spice-server acks every 4. */
#define MOTION_ACK_BUNCH 4

/* The wheel is two buttons in SPICE masks; qemu gets wheel steps instead. */
#define WHEEL_MASK (SPICE_MOUSE_BUTTON_MASK_UP | SPICE_MOUSE_BUTTON_MASK_DOWN)

typedef struct {
    QsChannel base;
    QsScancodeDecoder keys;
    uint32_t motions;
    guint pointer_head;         /* of the last absolute position: buttons go there */
} QsInputsChannel;

static void on_key(uint32_t qnum, gboolean down, gpointer user_data)
{
    QsInput *input = user_data;

    qs_input_key(input, qnum, down);
}

/* The client's lock keys differ from the guest's: toggle the guest's by
 * pressing the lock keys, as spice-server does (its LEDs then follow, and
 * Keyboard.Modifiers comes back equal). */
static void sync_locks(QsInput *input, uint16_t client, uint16_t guest)
{
    static const struct { uint16_t bit; uint32_t qnum; } locks[] = {
        { SPICE_KEYBOARD_MODIFIER_FLAGS_SCROLL_LOCK, 0x46 },
        { SPICE_KEYBOARD_MODIFIER_FLAGS_NUM_LOCK, 0x45 },
        { SPICE_KEYBOARD_MODIFIER_FLAGS_CAPS_LOCK, 0x3a },
    };

    for (guint i = 0; i < G_N_ELEMENTS(locks); i++) {
        if ((client ^ guest) & locks[i].bit) {
            qs_input_key(input, locks[i].qnum, TRUE);
            qs_input_key(input, locks[i].qnum, FALSE);
        }
    }
}

static void count_motion(QsInputsChannel *in)
{
    if (++in->motions % MOTION_ACK_BUNCH == 0) {
        qs_channel_send(&in->base, SPICE_MSG_INPUTS_MOUSE_MOTION_ACK, NULL);
    }
}

static void button(QsInput *input, const QsClientMsg *msg, gboolean down)
{
    uint32_t qbutton;
    uint32_t mask = msg->u.button.buttons & ~WHEEL_MASK;

    if (!qs_input_spice_button(msg->u.button.button, &qbutton)) {
        return;         /* no such button: nothing to press */
    }
    if (qbutton == QS_BUTTON_WHEEL_UP || qbutton == QS_BUTTON_WHEEL_DOWN) {
        /* A wheel step is PRESS + RELEASE; count it once. */
        if (down) {
            qs_input_wheel(input, qbutton == QS_BUTTON_WHEEL_UP ? -1 : 1);
        }
        return;
    }
    /* The state should already include this transition (spice-gtk's does);
     * make sure, whatever the client. */
    mask = down ? (mask | (1u << qbutton)) : (mask & ~(1u << qbutton));
    qs_input_buttons(input, mask);
}

static gboolean inputs_handle(QsChannel *ch, const QsClientMsg *msg, GError **error)
{
    QsInputsChannel *in = (QsInputsChannel *)ch;
    const QsChannelContext *ctx = ch->session->ctx;
    /* qemu's keyboard is VM-wide: head 0's console takes it. */
    QsInput *input = qs_channel_context_head(ctx, 0)->input;
    QsInput *pointer = qs_channel_context_head(ctx, in->pointer_head)->input;
    uint8_t bytes[4];
    guint n;

    (void)error;
    switch (msg->type) {
    case SPICE_MSGC_INPUTS_MOUSE_MOTION:
    case SPICE_MSGC_INPUTS_MOUSE_POSITION:
        count_motion(in);
        break;
    default:
        break;
    }
    if (!input) {
        return TRUE;    /* a console without input */
    }
    if (ch->session->view_only) {
        if (!ch->session->input_dropped_said && msg->type != SPICE_MSGC_INPUTS_KEY_MODIFIERS) {
            ch->session->input_dropped_said = TRUE;
            g_message("inputs channel: input from a view-only client dropped "
                      "(said once per session)");
        }
        return TRUE;
    }
    switch (msg->type) {
    case SPICE_MSGC_INPUTS_KEY_DOWN:
    case SPICE_MSGC_INPUTS_KEY_UP:
        /* The release bit is in the bytes themselves, as for spice-server. */
        n = qs_scancode_key_bytes(msg->u.key, bytes);
        qs_scancode_feed(&in->keys, bytes, n, on_key, input);
        break;
    case SPICE_MSGC_INPUTS_KEY_SCANCODE:
        qs_scancode_feed(&in->keys, msg->u.bytes.data, msg->u.bytes.len, on_key, input);
        break;
    case SPICE_MSGC_INPUTS_KEY_MODIFIERS:
        sync_locks(input, msg->u.modifiers, ctx->modifiers);
        break;
    case SPICE_MSGC_INPUTS_MOUSE_MOTION:
        if (ch->session->mouse_mode == SPICE_MOUSE_MODE_SERVER) {
            qs_input_motion_rel(input, msg->u.motion.dx, msg->u.motion.dy);
        }
        break;
    case SPICE_MSGC_INPUTS_MOUSE_POSITION:
        /* display_id is the display channel id, that is the head: the
         * position is in that console's pixels, for that console's mouse. */
        if (ch->session->mouse_mode == SPICE_MOUSE_MODE_CLIENT &&
            msg->u.position.display_id < ctx->n_heads &&
            qs_channel_context_head(ctx, msg->u.position.display_id)->input) {
            const QsConsoleView *head = qs_channel_context_head(ctx, msg->u.position.display_id);
            QsScreenInfo info;

            in->pointer_head = msg->u.position.display_id;
            qs_screen_get_info(head->screen, &info);
            qs_input_motion_abs(head->input,
                                msg->u.position.x, msg->u.position.y,
                                info.width, info.height);
        }
        break;
    case SPICE_MSGC_INPUTS_MOUSE_PRESS:
        button(pointer ? pointer : input, msg, TRUE);
        break;
    case SPICE_MSGC_INPUTS_MOUSE_RELEASE:
        button(pointer ? pointer : input, msg, FALSE);
        break;
    }
    return TRUE;
}

void qs_inputs_channel_modifiers_changed(QsChannel *ch)
{
    qs_channel_send(ch, SPICE_MSG_INPUTS_KEY_MODIFIERS,
                    qs_msg_inputs_key_modifiers(ch->session->ctx->modifiers));
}

static const QsChannelClass inputs_class = {
    .name = "inputs",
    .parse = qs_inputs_msg_parse,
    .handle = inputs_handle,
};

QsChannel *qs_inputs_channel_new(QsSession *session, QsConn *conn)
{
    QsInputsChannel *in = (QsInputsChannel *)qs_channel_new(
        &inputs_class, sizeof(QsInputsChannel), session, conn);

    qs_scancode_decoder_init(&in->keys);
    qs_channel_send(&in->base, SPICE_MSG_INPUTS_INIT,
                    qs_msg_inputs_init(session->ctx->modifiers));
    return &in->base;
}
