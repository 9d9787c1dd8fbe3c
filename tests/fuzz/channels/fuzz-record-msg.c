/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the record channel's client-message parser, a DATA as an Opus packet, and its sound through QsAudioPace to qemu's Reads. */
#include "wire/qs-client-msg.h"
#include "encode/qs-audio-opus-dec.h"
#include "flow/qs-audio-pace.h"

#include <spice/enums.h>

static volatile uint32_t fuzz_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A DATA's sound goes where the record channel sends it: into a pace of a
 * format picked by the time field, then out again by Reads whose sizes and
 * times come from the sound itself. */
static void through_pace(const QsClientMsg *msg)
{
    static const uint32_t bpf[] = { 1, 2, 4, 8, 6, 32 };
    uint32_t f = bpf[msg->u.record.time % G_N_ELEMENTS(bpf)];
    g_autoptr(QsAudioPace) pace = qs_audio_pace_new(f, f * 8000u * (1 + msg->u.record.time % 24),
                                                    10 + msg->u.record.time % 300);
    uint8_t out[4096];
    int64_t now = 0;

    for (uint32_t i = 0; i < msg->u.record.len; i += 97) {
        uint32_t n = MIN(msg->u.record.len - i, 97u);
        uint8_t b = msg->u.record.data[i];
        gsize got;

        qs_audio_pace_push(pace, msg->u.record.data + i, n, now);
        now += (int64_t)b * 500;
        got = qs_audio_pace_read(pace, out, (gsize)b * 16, now);
        if (got > (gsize)b * 16 || got % f != 0) {
            __builtin_trap();
        }
        for (gsize k = 0; k < got; k++) {
            fuzz_sink += out[k];
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    QsClientMsg msg;
    GError *error = NULL;
    uint16_t type;
    uint8_t *body;

    if (size < 2) {
        return 0;
    }
    type = (uint16_t)(data[0] | data[1] << 8);
    body = g_memdup2(data + 2, size - 2);
    if (qs_record_msg_parse(type, size > 2 ? body : NULL, size - 2, &msg, &error)) {
        if (error) {
            __builtin_trap();
        }
        if (type == SPICE_MSGC_RECORD_DATA || type == SPICE_MSGC_RECORD_MODE) {
            for (uint32_t i = 0; i < msg.u.record.len; i++) {
                fuzz_sink += msg.u.record.data[i];
            }
        }
        if (type == SPICE_MSGC_RECORD_DATA) {
            g_autoptr(QsOpusDec) dec = qs_opus_dec_new(48000, NULL);
            g_autoptr(GError) opus_error = NULL;
            g_autoptr(GBytes) pcm = qs_opus_dec_packet(dec, msg.u.record.data,
                                                       msg.u.record.len, &opus_error);

            if (!pcm == !opus_error || (pcm && g_bytes_get_size(pcm) > 5760u * 4u)) {
                __builtin_trap();   /* one or the other; at most 120 ms */
            }
            through_pace(&msg);
        }
    } else if (!error || error->domain != QS_CHANNEL_ERROR) {
        __builtin_trap();           /* a failure always names the problem */
    }
    g_clear_error(&error);
    g_free(body);
    return 0;
}
