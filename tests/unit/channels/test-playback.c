/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the sound channels: PCM conversion, their messages, and the playback and record channels over a fake connection. */
#include "channels/qs-channels.h"
#include "channels/qs-playback.h"
#include "encode/qs-audio-opus.h"
#include "wire/qs-wire.h"
#include "fake-peers.h"

#include <spice/enums.h>
#include <spice/protocol.h>
#include <math.h>
#include <string.h>

/* ---- conversion ---------------------------------------------------------- */

static QsAudioFormat fmt(uint8_t bits, gboolean is_signed, gboolean is_float,
                         gboolean be, uint8_t nchannels)
{
    QsAudioFormat f = {
        .bits = bits, .is_signed = is_signed, .is_float = is_float, .be = be,
        .freq = 48000, .nchannels = nchannels,
        .bytes_per_frame = (uint32_t)bits / 8 * nchannels,
    };

    f.bytes_per_second = f.freq * f.bytes_per_frame;
    return f;
}

static GBytes *convert(const QsAudioFormat *f, const void *data, gsize size)
{
    g_autoptr(GBytes) in = g_bytes_new(data, size);

    return qs_pcm_to_s16_stereo(f, in);
}

/* Frame i's (left, right) of S16LE stereo. */
static void frame(GBytes *out, guint i, int16_t *l, int16_t *r)
{
    gsize size;
    const uint8_t *p = g_bytes_get_data(out, &size);

    g_assert_cmpuint(size, >=, (i + 1) * 4u);
    *l = (int16_t)qs_wire_get_u16(p + i * 4);
    *r = (int16_t)qs_wire_get_u16(p + i * 4 + 2);
}

static void test_pcm(void)
{
    QsAudioFormat f = fmt(16, TRUE, FALSE, FALSE, 2);
    const uint8_t s16[] = { 0x34, 0x12, 0xff, 0xff, 0x00, 0x80, 0xff, 0x7f, 0x11 };
    g_autoptr(GBytes) in = g_bytes_new(s16, sizeof(s16));
    g_autoptr(GBytes) out = qs_pcm_to_s16_stereo(&f, in);
    int16_t l, r;

    /* qemu's own format: the same bytes, the partial frame left out. */
    g_assert_cmpuint(g_bytes_get_size(out), ==, 8);
    g_assert_cmpmem(g_bytes_get_data(out, NULL), 8, s16, 8);
    g_clear_pointer(&out, g_bytes_unref);

    {   /* unsigned 8-bit mono: centred, widened, doubled */
        const uint8_t u8[] = { 0x80, 0xff, 0x00 };

        f = fmt(8, FALSE, FALSE, FALSE, 1);
        out = convert(&f, u8, sizeof(u8));
        g_assert_cmpuint(g_bytes_get_size(out), ==, 12);
        frame(out, 0, &l, &r);
        g_assert_cmpint(l, ==, 0);
        g_assert_cmpint(r, ==, 0);
        frame(out, 1, &l, &r);
        g_assert_cmpint(l, ==, 127 * 256);
        g_assert_cmpint(r, ==, 127 * 256);
        frame(out, 2, &l, &r);
        g_assert_cmpint(l, ==, -32768);
        g_clear_pointer(&out, g_bytes_unref);
    }
    {   /* big-endian signed 16-bit stereo */
        const uint8_t be[] = { 0x12, 0x34, 0xff, 0xfe };

        f = fmt(16, TRUE, FALSE, TRUE, 2);
        out = convert(&f, be, sizeof(be));
        frame(out, 0, &l, &r);
        g_assert_cmpint(l, ==, 0x1234);
        g_assert_cmpint(r, ==, -2);
        g_clear_pointer(&out, g_bytes_unref);
    }
    {   /* unsigned 16-bit */
        const uint8_t u16[] = { 0x00, 0x80, 0x00, 0x00 };

        f = fmt(16, FALSE, FALSE, FALSE, 2);
        out = convert(&f, u16, sizeof(u16));
        frame(out, 0, &l, &r);
        g_assert_cmpint(l, ==, 0);
        g_assert_cmpint(r, ==, -32768);
        g_clear_pointer(&out, g_bytes_unref);
    }
    {   /* float stereo: scaled and clamped, NaN silent */
        const float fl[] = { 0.5f, -1.0f, 3.0f, NAN };

        f = fmt(32, TRUE, TRUE, FALSE, 2);
        out = convert(&f, fl, sizeof(fl));
        frame(out, 0, &l, &r);
        g_assert_cmpint(l, ==, 16384);
        g_assert_cmpint(r, ==, -32767);
        frame(out, 1, &l, &r);
        g_assert_cmpint(l, ==, 32767);
        g_assert_cmpint(r, ==, 0);
        g_clear_pointer(&out, g_bytes_unref);
    }
    {   /* signed 32-bit, six channels: the first two, top 16 bits */
        int32_t s32[6] = { 0x12345678, -0x10000, 7, 7, 7, 7 };

        f = fmt(32, TRUE, FALSE, FALSE, 6);
        out = convert(&f, s32, sizeof(s32));
        g_assert_cmpuint(g_bytes_get_size(out), ==, 4);
        frame(out, 0, &l, &r);
        g_assert_cmpint(l, ==, 0x1234);
        g_assert_cmpint(r, ==, -1);
        g_clear_pointer(&out, g_bytes_unref);
    }
    /* Less than one frame: nothing. */
    f = fmt(32, TRUE, FALSE, FALSE, 2);
    out = convert(&f, s16, 7);
    g_assert_cmpuint(g_bytes_get_size(out), ==, 0);
}

static void test_msg(void)
{
    const uint8_t pcm[] = { 1, 2, 3, 4 };
    const uint16_t vol[] = { 0xffff, 0x0101 };
    g_autoptr(GBytes) data = g_bytes_new(pcm, sizeof(pcm));
    g_autoptr(GBytes) m = NULL;
    gsize size;
    const uint8_t *p;

    m = qs_msg_playback_mode(0x01020304, SPICE_AUDIO_DATA_MODE_RAW);
    p = g_bytes_get_data(m, &size);
    g_assert_cmpuint(size, ==, 6);
    g_assert_cmpuint(qs_wire_get_u32(p), ==, 0x01020304);
    g_assert_cmpuint(qs_wire_get_u16(p + 4), ==, SPICE_AUDIO_DATA_MODE_RAW);
    g_clear_pointer(&m, g_bytes_unref);

    m = qs_msg_playback_start(2, SPICE_AUDIO_FMT_S16, 44100, 77);
    p = g_bytes_get_data(m, &size);
    g_assert_cmpuint(size, ==, 14);
    g_assert_cmpuint(qs_wire_get_u32(p), ==, 2);
    g_assert_cmpuint(qs_wire_get_u16(p + 4), ==, SPICE_AUDIO_FMT_S16);
    g_assert_cmpuint(qs_wire_get_u32(p + 6), ==, 44100);
    g_assert_cmpuint(qs_wire_get_u32(p + 10), ==, 77);
    g_clear_pointer(&m, g_bytes_unref);

    m = qs_msg_playback_data(99, data);
    p = g_bytes_get_data(m, &size);
    g_assert_cmpuint(size, ==, 8);
    g_assert_cmpuint(qs_wire_get_u32(p), ==, 99);
    g_assert_cmpmem(p + 4, 4, pcm, 4);
    g_clear_pointer(&m, g_bytes_unref);

    m = qs_msg_audio_volume(vol, 2);
    p = g_bytes_get_data(m, &size);
    g_assert_cmpuint(size, ==, 5);
    g_assert_cmpuint(p[0], ==, 2);
    g_assert_cmpuint(qs_wire_get_u16(p + 1), ==, 0xffff);
    g_assert_cmpuint(qs_wire_get_u16(p + 3), ==, 0x0101);
    g_clear_pointer(&m, g_bytes_unref);

    m = qs_msg_audio_mute(TRUE);
    p = g_bytes_get_data(m, &size);
    g_assert_cmpuint(size, ==, 1);
    g_assert_cmpuint(p[0], ==, 1);

    g_assert_cmpuint(qs_playback_volume_from_qemu(255), ==, 65535);
    g_assert_cmpuint(qs_playback_volume_from_qemu(0), ==, 0);
}

/* ---- the channel ----------------------------------------------------------- */

typedef struct {
    QsScreen *screen;
    QsChannels *hub;
    QsConn *main, *playback;
    uint32_t session_id;
    gboolean view_only;         /* link_channel links as a view-only client */
} Fixture;

static QsConn *link_channel(Fixture *fx, guint8 type, guint32 conn_id, guint32 caps,
                            SpiceLinkErr expect, guint32 *server_cap0)
{
    const QsServerCallbacks *cb = qs_channels_server_callbacks();
    QsConn *conn = fake_conn_new(type, 0, conn_id, caps);

    if (fx->view_only) {
        fake_conn_set_view_only(conn);
    }
    guint32 server_caps[QS_SERVER_MAX_CHANNEL_CAPS] = { 0 };
    guint n_caps = 0;
    guint32 session_id = 0;
    SpiceLinkErr err;

    err = cb->prepare(qs_conn_get_link_info(conn), server_caps, &n_caps, fx->hub);
    if (err == SPICE_LINK_ERR_OK) {
        err = cb->authorize(qs_conn_get_link_info(conn), &session_id, fx->hub);
    }
    g_assert_cmpint(err, ==, expect);
    if (server_cap0) {
        *server_cap0 = n_caps ? server_caps[0] : 0;
    }
    if (err != SPICE_LINK_ERR_OK) {
        qs_conn_unref(conn);
        return NULL;
    }
    fake_conn_set_session_id(conn, session_id);
    cb->attach(qs_conn_ref(conn), fx->hub);
    return conn;
}

static char *sent_types(QsConn *conn)
{
    GArray *sent = fake_conn_sent(conn);
    GString *s = g_string_new(NULL);

    for (guint i = 0; i < sent->len; i++) {
        g_string_append_printf(s, "%s%u", s->len ? "," : "",
                               g_array_index(sent, FakeMsg, i).type);
    }
    return g_string_free(s, FALSE);
}

#define CHECK_TYPES(conn, expect)                                           \
    do {                                                                    \
        g_autofree char *t_ = sent_types(conn);                             \
        g_assert_cmpstr(t_, ==, expect);                                    \
    } while (0)

static const uint8_t *sent_body(QsConn *conn, guint i, gsize *size)
{
    GArray *sent = fake_conn_sent(conn);

    g_assert_cmpuint(i, <, sent->len);
    return g_bytes_get_data(g_array_index(sent, FakeMsg, i).payload, size);
}

/* The channel types of the CHANNELS_LIST `main` sent, e.g. "2,3,4,5". */
static char *list_sent(QsConn *main)
{
    GString *s = g_string_new(NULL);
    gsize size;
    const uint8_t *p;

    CHECK_TYPES(main, "104");
    p = sent_body(main, 0, &size);
    g_assert_cmpuint(size, ==, 4 + 2 * qs_wire_get_u32(p));
    for (uint32_t i = 0; i < qs_wire_get_u32(p); i++) {
        g_string_append_printf(s, "%s%u", s->len ? "," : "", p[4 + 2 * i]);
    }
    fake_conn_clear(main);
    return g_string_free(s, FALSE);
}

/* The channel types CHANNELS_LIST names, e.g. "2,3,4,5". */
static char *channels_list(Fixture *fx)
{
    fake_conn_clear(fx->main);
    fake_conn_deliver(fx->main, SPICE_MSGC_MAIN_ATTACH_CHANNELS, NULL, 0);
    return list_sent(fx->main);
}

static GBytes *tone(guint frames)
{
    g_autofree uint8_t *p = g_malloc0(frames * 4u);

    for (guint i = 0; i < frames * 4u; i++) {
        p[i] = (uint8_t)i;
    }
    return g_bytes_new(p, frames * 4u);
}

/* A client that does not read while qemu writes `pcm` n times: nothing goes
 * out; then it reads, and what waited is sent. */
static void sent_after_stall(Fixture *fx, GBytes *pcm, guint n)
{
    fake_conn_set_queued(fx->playback, 1024 * 1024);
    for (guint i = 0; i < n; i++) {
        qs_channels_audio_data(fx->hub, pcm);
    }
    CHECK_TYPES(fx->playback, "");
    fake_conn_drain(fx->playback);
    fake_loop_run_pending();
}

static void test_channel(void)
{
    Fixture fx = { 0 };
    QsChannelsConfig cfg = { .vm_name = "vm" };
    g_autoptr(GBytes) pcm = tone(441);     /* 10 ms at 44100 */
    g_autofree char *list = NULL;
    guint32 cap0 = 0;
    gsize size;
    const uint8_t *p;
    uint32_t t0;

    fx.screen = qs_screen_new();
    cfg.screen = fx.screen;
    fx.hub = qs_channels_new(&cfg);
    fx.main = link_channel(&fx, SPICE_CHANNEL_MAIN, 0, 0, SPICE_LINK_ERR_OK, NULL);
    fx.session_id = qs_channels_get_session_id(fx.hub);

    /* No audio from qemu: not listed, not linkable. */
    list = channels_list(&fx);
    g_assert_cmpstr(list, ==, "2,3,4");
    g_clear_pointer(&list, g_free);
    g_assert_null(link_channel(&fx, SPICE_CHANNEL_PLAYBACK, fx.session_id,
                               1u << SPICE_PLAYBACK_CAP_VOLUME,
                               SPICE_LINK_ERR_CHANNEL_NOT_AVAILABLE, NULL));

    /* Audio: listed, linkable, volume known before the client came. */
    qs_channels_audio_set_available(fx.hub, TRUE);
    qs_channels_audio_volume(fx.hub, FALSE, (const uint8_t[]){ 255, 128 }, 2);
    list = channels_list(&fx);
    g_assert_cmpstr(list, ==, "2,3,4,5");
    fx.playback = link_channel(&fx, SPICE_CHANNEL_PLAYBACK, fx.session_id,
                               1u << SPICE_PLAYBACK_CAP_VOLUME, SPICE_LINK_ERR_OK, &cap0);
    g_assert_true(cap0 & (1u << SPICE_PLAYBACK_CAP_VOLUME));
    g_assert_true(cap0 & (1u << SPICE_PLAYBACK_CAP_OPUS));
    CHECK_TYPES(fx.playback, "105,106");
    p = sent_body(fx.playback, 0, &size);
    g_assert_cmpuint(size, ==, 5);
    g_assert_cmpuint(qs_wire_get_u16(p + 1), ==, 65535);
    g_assert_cmpuint(qs_wire_get_u16(p + 3), ==, 128 * 257);
    p = sent_body(fx.playback, 1, &size);
    g_assert_cmpuint(p[0], ==, 0);
    fake_conn_clear(fx.playback);

    /* Sound before START is not sent; then MODE raw, START, DATA. */
    qs_channels_audio_data(fx.hub, pcm);
    CHECK_TYPES(fx.playback, "");
    qs_channels_audio_start(fx.hub, 44100);
    CHECK_TYPES(fx.playback, "102,103");
    p = sent_body(fx.playback, 0, &size);
    g_assert_cmpuint(qs_wire_get_u16(p + 4), ==, SPICE_AUDIO_DATA_MODE_RAW);
    p = sent_body(fx.playback, 1, &size);
    g_assert_cmpuint(qs_wire_get_u32(p), ==, 2);
    g_assert_cmpuint(qs_wire_get_u16(p + 4), ==, SPICE_AUDIO_FMT_S16);
    g_assert_cmpuint(qs_wire_get_u32(p + 6), ==, 44100);
    t0 = qs_wire_get_u32(p + 10);
    fake_conn_clear(fx.playback);
    qs_channels_audio_data(fx.hub, pcm);
    CHECK_TYPES(fx.playback, "101");
    p = sent_body(fx.playback, 0, &size);
    g_assert_cmpuint(size, ==, 4 + 441 * 4);
    g_assert_cmpint((int32_t)(qs_wire_get_u32(p) - t0), >=, 0);
    g_assert_cmpmem(p + 4, size - 4, g_bytes_get_data(pcm, NULL), 441 * 4);
    fake_conn_clear(fx.playback);

    /* A client that does not read: sound waits in the channel, at most
     * 200 ms of it, the oldest dropped; all of it goes once it reads. */
    sent_after_stall(&fx, pcm, 50);
    /* 200 ms at 44100 Hz is 8820 frames: 20 DATA of 441 frames. */
    g_assert_cmpuint(fake_conn_sent(fx.playback)->len, ==, 20);
    fake_conn_clear(fx.playback);

    /* Mute, then STOP; a new client of a playing qemu gets START at once. */
    qs_channels_audio_volume(fx.hub, TRUE, (const uint8_t[]){ 10, 10 }, 2);
    CHECK_TYPES(fx.playback, "105,106");
    p = sent_body(fx.playback, 1, &size);
    g_assert_cmpuint(p[0], ==, 1);
    fake_conn_clear(fx.playback);
    qs_channels_audio_stop(fx.hub);
    CHECK_TYPES(fx.playback, "104");
    fake_conn_clear(fx.playback);
    qs_channels_audio_data(fx.hub, pcm);
    CHECK_TYPES(fx.playback, "");
    qs_channels_audio_start(fx.hub, 48000);
    qs_conn_unref(fx.playback);
    fx.playback = link_channel(&fx, SPICE_CHANNEL_PLAYBACK, fx.session_id, 0,
                               SPICE_LINK_ERR_OK, NULL);
    CHECK_TYPES(fx.playback, "102,103");     /* no VOLUME cap: no volume */

    /* Playback has no client messages of its own. */
    fake_conn_deliver(fx.playback, 101, NULL, 0);
    g_assert_nonnull(fake_conn_close_reason(fx.playback));

    qs_channels_free(fx.hub);
    fake_loop_run_pending();
    qs_conn_unref(fx.main);
    qs_conn_unref(fx.playback);
    qs_screen_free(fx.screen);
}

/* A client that decodes Opus gets it, at qemu's rate when Opus codes it and
 * converted to 48 kHz when not; a client that does not read holds at most
 * 200 ms of packets. (Raw PCM for a client without OPUS: test_channel.) */
static void test_channel_opus(void)
{
    Fixture fx = { 0 };
    QsChannelsConfig cfg = { .vm_name = "vm" };
    g_autoptr(GBytes) pcm = tone(480);     /* 10 ms at 48000 */
    const guint32 caps = 1u << SPICE_PLAYBACK_CAP_VOLUME | 1u << SPICE_PLAYBACK_CAP_OPUS;
    const uint8_t *p;
    gsize size;

    fx.screen = qs_screen_new();
    cfg.screen = fx.screen;
    fx.hub = qs_channels_new(&cfg);
    fx.main = link_channel(&fx, SPICE_CHANNEL_MAIN, 0, 0, SPICE_LINK_ERR_OK, NULL);
    fx.session_id = qs_channels_get_session_id(fx.hub);
    qs_channels_audio_set_available(fx.hub, TRUE);
    fx.playback = link_channel(&fx, SPICE_CHANNEL_PLAYBACK, fx.session_id, caps,
                               SPICE_LINK_ERR_OK, NULL);

    qs_channels_audio_start(fx.hub, 48000);
    CHECK_TYPES(fx.playback, "102,103");
    p = sent_body(fx.playback, 0, &size);
    g_assert_cmpuint(qs_wire_get_u16(p + 4), ==, SPICE_AUDIO_DATA_MODE_OPUS);
    p = sent_body(fx.playback, 1, &size);
    g_assert_cmpuint(qs_wire_get_u32(p + 6), ==, 48000);
    fake_conn_clear(fx.playback);

    /* One packet per 10 ms, whatever the writes' sizes. */
    {
        g_autoptr(GBytes) half = g_bytes_new_from_bytes(pcm, 0, 240 * 4);

        qs_channels_audio_data(fx.hub, half);
        CHECK_TYPES(fx.playback, "");
        qs_channels_audio_data(fx.hub, pcm);
        CHECK_TYPES(fx.playback, "101");
        qs_channels_audio_data(fx.hub, half);
        CHECK_TYPES(fx.playback, "101,101");
    }
    p = sent_body(fx.playback, 1, &size);
    g_assert_cmpuint(size, >, 4);
    g_assert_cmpuint(size, <, 4 + 480 * 4 / 4);  /* far below raw PCM */
    fake_conn_clear(fx.playback);

    /* 200 ms at 48000 Hz: 20 packets wait, the older ones are dropped. */
    sent_after_stall(&fx, pcm, 50);
    g_assert_cmpuint(fake_conn_sent(fx.playback)->len, ==, 20);
    fake_conn_clear(fx.playback);

    /* qemu's 44100 Hz is no Opus rate: converted to 48000, where a second
     * of qemu's sound makes 100 packets (give or take the one in progress). */
    qs_channels_audio_stop(fx.hub);
    qs_channels_audio_start(fx.hub, 44100);
    CHECK_TYPES(fx.playback, "104,102,103");
    p = sent_body(fx.playback, 1, &size);
    g_assert_cmpuint(qs_wire_get_u16(p + 4), ==, SPICE_AUDIO_DATA_MODE_OPUS);
    p = sent_body(fx.playback, 2, &size);
    g_assert_cmpuint(qs_wire_get_u32(p + 6), ==, 48000);
    fake_conn_clear(fx.playback);
    {
        g_autoptr(GBytes) pcm441 = tone(441);

        for (guint i = 0; i < 100; i++) {
            qs_channels_audio_data(fx.hub, pcm441);
            fake_conn_drain(fx.playback);
            fake_loop_run_pending();
        }
    }
    g_assert_cmpuint(fake_conn_sent(fx.playback)->len, >=, 99);
    g_assert_cmpuint(fake_conn_sent(fx.playback)->len, <=, 100);

    qs_channels_free(fx.hub);
    fake_loop_run_pending();
    qs_conn_unref(fx.main);
    qs_conn_unref(fx.playback);
    qs_screen_free(fx.screen);
}

/* ---- the record channel ---------------------------------------------------- */

static void collect(const uint8_t *pcm, gsize size, gpointer data)
{
    g_byte_array_append(data, pcm, (guint)size);
}

static void record_data(QsConn *conn, uint32_t time, const uint8_t *pcm, gsize size)
{
    g_autoptr(GByteArray) m = g_byte_array_new();

    qs_wire_u32(m, time);
    g_byte_array_append(m, pcm, (guint)size);
    fake_conn_deliver(conn, SPICE_MSGC_RECORD_DATA, m->data, m->len);
}

static void record_mode(QsConn *conn, uint16_t mode)
{
    g_autoptr(GByteArray) m = g_byte_array_new();

    qs_wire_u32(m, 5);
    qs_wire_u16(m, mode);
    fake_conn_deliver(conn, SPICE_MSGC_RECORD_MODE, m->data, m->len);
}

static void test_record(void)
{
    Fixture fx = { 0 };
    QsChannelsConfig cfg = { .vm_name = "vm" };
    g_autoptr(GByteArray) got = g_byte_array_new();
    const uint8_t pcm[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    g_autofree char *list = NULL;
    QsConn *rec, *rec2;
    guint32 cap0 = 0;
    gsize size;
    const uint8_t *p;

    fx.screen = qs_screen_new();
    cfg.screen = fx.screen;
    fx.hub = qs_channels_new(&cfg);
    qs_channels_record_set_sink(fx.hub, collect, got);
    fx.main = link_channel(&fx, SPICE_CHANNEL_MAIN, 0, 0, SPICE_LINK_ERR_OK, NULL);
    fx.session_id = qs_channels_get_session_id(fx.hub);

    /* qemu takes no recorded sound: not listed, not linkable. */
    g_assert_null(link_channel(&fx, SPICE_CHANNEL_RECORD, fx.session_id, 0,
                               SPICE_LINK_ERR_CHANNEL_NOT_AVAILABLE, NULL));

    /* It does: listed, linkable with VOLUME and OPUS, volume first. */
    qs_channels_record_set_available(fx.hub, TRUE);
    qs_channels_record_volume(fx.hub, TRUE, (const uint8_t[]){ 255 }, 1);
    list = channels_list(&fx);
    g_assert_cmpstr(list, ==, "2,3,4,6");
    rec = link_channel(&fx, SPICE_CHANNEL_RECORD, fx.session_id,
                       1u << SPICE_RECORD_CAP_VOLUME, SPICE_LINK_ERR_OK, &cap0);
    g_assert_cmpuint(cap0, ==, 1u << SPICE_RECORD_CAP_VOLUME | 1u << SPICE_RECORD_CAP_OPUS);
    CHECK_TYPES(rec, "103,104");
    p = sent_body(rec, 0, &size);
    g_assert_cmpuint(size, ==, 3);
    g_assert_cmpuint(qs_wire_get_u16(p + 1), ==, 65535);
    p = sent_body(rec, 1, &size);
    g_assert_cmpuint(p[0], ==, 1);
    fake_conn_clear(rec);

    /* Sound before the guest records goes nowhere. */
    record_data(rec, 1, pcm, sizeof(pcm));
    g_assert_cmpuint(got->len, ==, 0);

    /* The guest records; a client without Opus is asked for qemu's own
     * format (S16, qemu's rate and channels), and its MODE raw,
     * START_MARK and DATA reach the sink unchanged. */
    qs_channels_record_start(fx.hub, 44100, 2);
    CHECK_TYPES(rec, "101");
    p = sent_body(rec, 0, &size);
    g_assert_cmpuint(size, ==, 10);
    g_assert_cmpuint(qs_wire_get_u32(p), ==, 2);
    g_assert_cmpuint(qs_wire_get_u16(p + 4), ==, SPICE_AUDIO_FMT_S16);
    g_assert_cmpuint(qs_wire_get_u32(p + 6), ==, 44100);
    fake_conn_clear(rec);
    record_mode(rec, SPICE_AUDIO_DATA_MODE_RAW);
    fake_conn_deliver(rec, SPICE_MSGC_RECORD_START_MARK, pcm, 4);
    record_data(rec, 6, pcm, sizeof(pcm));
    record_data(rec, 7, pcm, 0);
    g_assert_cmpmem(got->data, got->len, pcm, sizeof(pcm));
    g_assert_null(fake_conn_close_reason(rec));

    /* STOP; DATA still in flight is dropped quietly. */
    qs_channels_record_stop(fx.hub);
    CHECK_TYPES(rec, "102");
    fake_conn_clear(rec);
    record_data(rec, 8, pcm, sizeof(pcm));
    g_assert_cmpuint(got->len, ==, sizeof(pcm));
    g_assert_null(fake_conn_close_reason(rec));
    /* Without OPUS offered by the client, a client's MODE OPUS is refused. */
    qs_channels_record_start(fx.hub, 44100, 2);
    record_mode(rec, SPICE_AUDIO_DATA_MODE_OPUS);
    g_assert_nonnull(strstr(fake_conn_close_reason(rec), "audio mode 3"));
    g_assert_null(fake_conn_close_reason(fx.main));
    qs_channels_record_stop(fx.hub);

    /* A client with Opus, qemu recording at 44100 Hz: asked for stereo at
     * 48 kHz (spice-gtk's Opus rates), its packets decoded and converted
     * to 44100 Hz: 10 ms stays 10 ms. */
    rec2 = link_channel(&fx, SPICE_CHANNEL_RECORD, fx.session_id,
                        1u << SPICE_RECORD_CAP_OPUS, SPICE_LINK_ERR_OK, NULL);
    CHECK_TYPES(rec2, "");
    qs_channels_record_start(fx.hub, 44100, 2);
    CHECK_TYPES(rec2, "101");
    p = sent_body(rec2, 0, &size);
    g_assert_cmpuint(qs_wire_get_u32(p), ==, 2);
    g_assert_cmpuint(qs_wire_get_u32(p + 6), ==, 48000);
    record_mode(rec2, SPICE_AUDIO_DATA_MODE_OPUS);
    {
        g_autoptr(QsOpusEnc) enc = qs_opus_enc_new(48000, NULL);
        g_autoptr(GPtrArray) packets = g_ptr_array_new_with_free_func(
            (GDestroyNotify)g_bytes_unref);
        g_autoptr(GBytes) tone10 = tone(480 * 10);

        g_assert_true(qs_opus_enc_push(enc, tone10, packets, NULL));
        g_assert_cmpuint(packets->len, ==, 10);
        g_byte_array_set_size(got, 0);
        for (guint i = 0; i < packets->len; i++) {
            GBytes *b = g_ptr_array_index(packets, i);

            record_data(rec2, i, g_bytes_get_data(b, NULL), g_bytes_get_size(b));
        }
        /* 100 ms at 44100 Hz, give or take the converter's one frame. */
        g_assert_cmpuint(got->len / 4, >=, 4409);
        g_assert_cmpuint(got->len / 4, <=, 4411);
        g_assert_null(fake_conn_close_reason(rec2));
    }

    /* A mono voice: the stereo the client sends becomes the mean of its
     * channels. */
    qs_channels_record_start(fx.hub, 48000, 1);
    fake_conn_clear(rec2);
    g_byte_array_set_size(got, 0);
    record_mode(rec2, SPICE_AUDIO_DATA_MODE_RAW);
    {
        const uint8_t lr[8] = { 0x10, 0x00, 0x30, 0x00, 0x00, 0x80, 0x00, 0x80 };

        record_data(rec2, 9, lr, sizeof(lr));
        g_assert_cmpuint(got->len, ==, 4);
        g_assert_cmpint((int16_t)qs_wire_get_u16(got->data), ==, 0x20);
        g_assert_cmpint((int16_t)qs_wire_get_u16(got->data + 2), ==, -32768);
    }

    /* A packet that is not Opus closes the record channel alone. */
    record_mode(rec2, SPICE_AUDIO_DATA_MODE_OPUS);
    record_data(rec2, 10, (const uint8_t[]){ 0xff, 0xff, 0xff }, 3);
    g_assert_nonnull(strstr(fake_conn_close_reason(rec2), "cannot decode"));
    g_assert_null(fake_conn_close_reason(fx.main));

    qs_channels_free(fx.hub);
    fake_loop_run_pending();
    qs_conn_unref(fx.main);
    qs_conn_unref(rec);
    qs_conn_unref(rec2);
    qs_screen_free(fx.screen);
}

/* Did the channel send a message of `type`? */
static gboolean sent_has(QsConn *conn, const char *type)
{
    g_autofree char *types = sent_types(conn);
    g_auto(GStrv) each = g_strsplit(types, ",", -1);

    return g_strv_contains((const char *const *)each, type);
}

/* Several sessions: every one hears the guest; the oldest with a record
 * channel records, the others' record channels are never started (their
 * sound goes nowhere), and when it leaves the next one starts. */
static void test_sessions(void)
{
    Fixture fx = { 0 };
    QsChannelsConfig cfg = { .vm_name = "vm" };
    g_autoptr(GByteArray) got = g_byte_array_new();
    g_autoptr(GBytes) tone10 = tone(441);
    const uint8_t pcm[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    QsConn *a_main, *a_play, *a_rec, *b_main, *b_play, *b_rec;
    uint32_t a_id, b_id;

    fx.screen = qs_screen_new();
    cfg.screen = fx.screen;
    fx.hub = qs_channels_new(&cfg);
    qs_channels_record_set_sink(fx.hub, collect, got);
    qs_channels_audio_set_available(fx.hub, TRUE);
    qs_channels_record_set_available(fx.hub, TRUE);
    qs_channels_record_start(fx.hub, 44100, 2);

    a_main = link_channel(&fx, SPICE_CHANNEL_MAIN, 0, 0, SPICE_LINK_ERR_OK, NULL);
    a_id = qs_channels_get_session_id(fx.hub);
    a_play = link_channel(&fx, SPICE_CHANNEL_PLAYBACK, a_id, 0, SPICE_LINK_ERR_OK, NULL);
    a_rec = link_channel(&fx, SPICE_CHANNEL_RECORD, a_id, 0, SPICE_LINK_ERR_OK, NULL);
    b_main = link_channel(&fx, SPICE_CHANNEL_MAIN, 0, 0, SPICE_LINK_ERR_OK, NULL);
    b_id = qs_channels_get_session_id(fx.hub);
    g_assert_cmpuint(a_id, !=, b_id);
    b_play = link_channel(&fx, SPICE_CHANNEL_PLAYBACK, b_id, 0, SPICE_LINK_ERR_OK, NULL);
    b_rec = link_channel(&fx, SPICE_CHANNEL_RECORD, b_id, 0, SPICE_LINK_ERR_OK, NULL);
    g_assert_true(sent_has(a_rec, "101"));     /* START */
    g_assert_false(sent_has(b_rec, "101"));

    /* Both hear the guest. */
    fake_conn_clear(a_play);
    fake_conn_clear(b_play);
    qs_channels_audio_start(fx.hub, 44100);
    qs_channels_audio_data(fx.hub, tone10);
    fake_loop_run_pending();
    g_assert_true(sent_has(a_play, "101"));    /* DATA */
    g_assert_true(sent_has(b_play, "101"));

    /* Only a's sound reaches the guest. */
    record_mode(a_rec, SPICE_AUDIO_DATA_MODE_RAW);
    record_mode(b_rec, SPICE_AUDIO_DATA_MODE_RAW);
    record_data(b_rec, 1, pcm, sizeof(pcm));
    g_assert_cmpuint(got->len, ==, 0);
    record_data(a_rec, 2, pcm, sizeof(pcm));
    g_assert_cmpuint(got->len, ==, sizeof(pcm));

    /* A view-only session hears the guest but never records. */
    fx.view_only = TRUE;
    {
        QsConn *v_main = link_channel(&fx, SPICE_CHANNEL_MAIN, 0, 0, SPICE_LINK_ERR_OK, NULL);
        uint32_t v_id = qs_channels_get_session_id(fx.hub);
        QsConn *v_rec = link_channel(&fx, SPICE_CHANNEL_RECORD, v_id, 0, SPICE_LINK_ERR_OK, NULL);

        g_assert_false(sent_has(v_rec, "101"));
        record_mode(v_rec, SPICE_AUDIO_DATA_MODE_RAW);
        record_data(v_rec, 9, pcm, sizeof(pcm));
        g_assert_cmpuint(got->len, ==, sizeof(pcm));
        fake_conn_deliver(v_main, SPICE_MSGC_DISCONNECTING, "\0\0\0\0\0\0\0\0\0\0\0\0", 12);
        fake_loop_run_pending();
        qs_conn_unref(v_main);
        qs_conn_unref(v_rec);
    }
    fx.view_only = FALSE;

    /* a leaves: b records from now on. */
    fake_conn_clear(b_rec);
    fake_conn_deliver(a_main, SPICE_MSGC_DISCONNECTING, "\0\0\0\0\0\0\0\0\0\0\0\0", 12);
    fake_loop_run_pending();
    g_assert_nonnull(fake_conn_close_reason(a_rec));
    CHECK_TYPES(b_rec, "101");
    record_data(b_rec, 3, pcm, sizeof(pcm));
    g_assert_cmpuint(got->len, ==, 2 * sizeof(pcm));

    qs_channels_free(fx.hub);
    fake_loop_run_pending();
    for (QsConn **c = (QsConn *[]){ a_main, a_play, a_rec, b_main, b_play, b_rec, NULL }; *c; c++) {
        qs_conn_unref(*c);
    }
    qs_screen_free(fx.screen);
}

/* A client asking for its channels before qemu answered the audio
 * registrations gets the list once both answers are in, with what qemu
 * accepted; without an answer, after the hold (3 s), without sound. */
static void test_list_waits(void)
{
    Fixture fx = { 0 };
    QsChannelsConfig cfg = { .vm_name = "vm" };
    g_autofree char *list = NULL;
    gint64 t0;

    fx.screen = qs_screen_new();
    cfg.screen = fx.screen;
    fx.hub = qs_channels_new(&cfg);
    qs_channels_audio_settling(fx.hub, TRUE, TRUE);
    fx.main = link_channel(&fx, SPICE_CHANNEL_MAIN, 0, 0, SPICE_LINK_ERR_OK, NULL);
    fake_conn_clear(fx.main);
    fake_conn_deliver(fx.main, SPICE_MSGC_MAIN_ATTACH_CHANNELS, NULL, 0);
    CHECK_TYPES(fx.main, "");
    qs_channels_audio_set_available(fx.hub, TRUE);      /* output accepted */
    fake_loop_run_pending();
    CHECK_TYPES(fx.main, "");                           /* capture still awaited */
    qs_channels_record_set_available(fx.hub, FALSE);    /* capture refused */
    list = list_sent(fx.main);
    g_assert_cmpstr(list, ==, "2,3,4,5");
    g_clear_pointer(&list, g_free);
    /* Answered: the next client's list goes at once. */
    g_assert_cmpstr(list = channels_list(&fx), ==, "2,3,4,5");
    g_clear_pointer(&list, g_free);
    qs_channels_free(fx.hub);
    fake_loop_run_pending();
    qs_conn_unref(fx.main);

    /* No answer: the list goes after the hold, without the sound. */
    fx.hub = qs_channels_new(&cfg);
    qs_channels_audio_settling(fx.hub, TRUE, FALSE);
    fx.main = link_channel(&fx, SPICE_CHANNEL_MAIN, 0, 0, SPICE_LINK_ERR_OK, NULL);
    fake_conn_clear(fx.main);
    t0 = g_get_monotonic_time();
    fake_conn_deliver(fx.main, SPICE_MSGC_MAIN_ATTACH_CHANNELS, NULL, 0);
    while (fake_conn_sent(fx.main)->len == 0) {
        g_assert_cmpint(g_get_monotonic_time() - t0, <, 10 * G_USEC_PER_SEC);
        g_main_context_iteration(NULL, TRUE);
    }
    g_assert_cmpint(g_get_monotonic_time() - t0, >=, 3 * G_USEC_PER_SEC - 10000);
    list = list_sent(fx.main);
    g_assert_cmpstr(list, ==, "2,3,4");
    g_clear_pointer(&list, g_free);

    /* A client that leaves while its list is held: nothing fires later. */
    {
        QsConn *b_main = link_channel(&fx, SPICE_CHANNEL_MAIN, 0, 0, SPICE_LINK_ERR_OK, NULL);

        qs_channels_audio_settling(fx.hub, TRUE, FALSE);
        fake_conn_deliver(b_main, SPICE_MSGC_MAIN_ATTACH_CHANNELS, NULL, 0);
        fake_conn_deliver(b_main, SPICE_MSGC_DISCONNECTING, "\0\0\0\0\0\0\0\0\0\0\0\0", 12);
        fake_loop_run_pending();
        qs_conn_unref(b_main);
    }
    qs_channels_free(fx.hub);
    fake_loop_run_pending();
    qs_conn_unref(fx.main);
    qs_screen_free(fx.screen);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/channels/playback/pcm", test_pcm);
    g_test_add_func("/channels/playback/msg", test_msg);
    g_test_add_func("/channels/playback/channel", test_channel);
    g_test_add_func("/channels/playback/channel-opus", test_channel_opus);
    g_test_add_func("/channels/record/channel", test_record);
    g_test_add_func("/channels/audio/sessions", test_sessions);
    g_test_add_func("/channels/audio/list-waits", test_list_waits);
    return g_test_run();
}
