/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the VDAgent wire format: reassembly, limits, chunking, clipboard and monitors bodies. */
#include "wire/qs-agent.h"
#include "wire/qs-wire.h"

#include <spice/vd_agent.h>
#include <string.h>

typedef struct {
    GPtrArray *msgs;            /* GBytes of each kept body, or NULL if skipped */
    GArray *types;
} Seen;

static gboolean keep_clipboard(uint32_t type)
{
    return type != VD_AGENT_MONITORS_CONFIG && type != VD_AGENT_FILE_XFER_DATA;
}

static void on_msg(const QsAgentMsg *msg, gpointer user_data)
{
    Seen *seen = user_data;

    g_array_append_val(seen->types, msg->type);
    g_ptr_array_add(seen->msgs, msg->kept ? g_bytes_new(msg->data, msg->size) : NULL);
}

static void seen_init(Seen *seen)
{
    seen->msgs = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    seen->types = g_array_new(FALSE, FALSE, sizeof(uint32_t));
}

static void seen_clear(Seen *seen)
{
    g_ptr_array_unref(seen->msgs);
    g_array_unref(seen->types);
}

static GByteArray *header(uint32_t protocol, uint32_t type, uint32_t size)
{
    GByteArray *b = g_byte_array_new();

    qs_wire_u32(b, protocol);
    qs_wire_u32(b, type);
    qs_wire_u64(b, 0x1122334455667788ull);
    qs_wire_u32(b, size);
    return b;
}

/* A 5000-byte clipboard goes out as 2048 + 2048 + 924 pieces and comes back
 * whole, whichever way the pieces are cut on the way in. */
static void test_roundtrip(void)
{
    g_autofree uint8_t *text = g_malloc(5000);
    GQueue pieces = G_QUEUE_INIT;
    g_autoptr(QsAgentReader) r = qs_agent_reader_new(keep_clipboard);
    g_autoptr(GError) error = NULL;
    g_autoptr(GByteArray) stream = g_byte_array_new();
    g_autoptr(GByteArray) empty = NULL;
    Seen seen;

    for (guint i = 0; i < 5000; i++) {
        text[i] = (uint8_t)('a' + i % 26);
    }
    g_assert_cmpuint(qs_agent_build(VD_AGENT_CLIPBOARD, text, 5000, &pieces), ==, 3);
    g_assert_cmpuint(g_bytes_get_size(g_queue_peek_nth(&pieces, 0)), ==, 2048);
    g_assert_cmpuint(g_bytes_get_size(g_queue_peek_nth(&pieces, 1)), ==, 2048);
    g_assert_cmpuint(g_bytes_get_size(g_queue_peek_nth(&pieces, 2)), ==, 5020 - 4096);
    while (!g_queue_is_empty(&pieces)) {
        g_autoptr(GBytes) p = g_queue_pop_head(&pieces);
        gsize n;
        const uint8_t *d = g_bytes_get_data(p, &n);

        g_byte_array_append(stream, d, (guint)n);
    }
    /* An empty message right behind it, in the same piece. */
    empty = header(1, VD_AGENT_CLIPBOARD_RELEASE, 0);
    g_byte_array_append(stream, empty->data, empty->len);

    /* Cut into odd pieces, one splitting a header. */
    seen_init(&seen);
    for (guint off = 0; off < stream->len;) {
        guint n = MIN(stream->len - off, off == 0 ? 7u : 1999u);

        g_assert_true(qs_agent_reader_feed(r, stream->data + off, n, on_msg, &seen, &error));
        g_assert_no_error(error);
        off += n;
    }
    g_assert_cmpuint(seen.msgs->len, ==, 2);
    g_assert_cmpuint(g_array_index(seen.types, uint32_t, 0), ==, VD_AGENT_CLIPBOARD);
    g_assert_cmpmem(g_bytes_get_data(seen.msgs->pdata[0], NULL),
                    g_bytes_get_size(seen.msgs->pdata[0]), text, 5000);
    g_assert_cmpuint(g_array_index(seen.types, uint32_t, 1), ==, VD_AGENT_CLIPBOARD_RELEASE);
    g_assert_cmpuint(g_bytes_get_size(seen.msgs->pdata[1]), ==, 0);
    seen_clear(&seen);
}

static gboolean feed_header(uint32_t protocol, uint32_t type, uint32_t size,
                            Seen *seen, GError **error)
{
    g_autoptr(QsAgentReader) r = qs_agent_reader_new(keep_clipboard);
    g_autoptr(GByteArray) h = header(protocol, type, size);

    return qs_agent_reader_feed(r, h->data, h->len, on_msg, seen, error);
}

static void test_limits(void)
{
    g_autoptr(GError) error = NULL;
    Seen seen;

    seen_init(&seen);
    g_assert_false(feed_header(2, VD_AGENT_CLIPBOARD, 4, &seen, &error));
    g_assert_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_MALFORMED);
    g_clear_error(&error);

    g_assert_false(feed_header(1, VD_AGENT_CLIPBOARD, QS_AGENT_CLIPBOARD_MSG_MAX + 1,
                               &seen, &error));
    g_assert_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_TOO_BIG);
    g_clear_error(&error);
    g_assert_true(feed_header(1, VD_AGENT_CLIPBOARD, QS_AGENT_CLIPBOARD_MSG_MAX,
                              &seen, &error));

    /* Kept small types have the small limit. */
    g_assert_false(feed_header(1, VD_AGENT_CLIPBOARD_GRAB, QS_AGENT_SMALL_MSG_MAX + 1,
                               &seen, &error));
    g_assert_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_TOO_BIG);
    g_clear_error(&error);
    g_assert_cmpuint(seen.msgs->len, ==, 0);
    seen_clear(&seen);
}

/* Types not kept are read past, however big (within the message limit). */
static void test_skip(void)
{
    g_autoptr(QsAgentReader) r = qs_agent_reader_new(keep_clipboard);
    g_autoptr(GError) error = NULL;
    g_autoptr(GByteArray) h = header(1, VD_AGENT_MONITORS_CONFIG, 300000);
    g_autofree uint8_t *junk = g_malloc0(2048);
    Seen seen;
    guint left = 300000;

    seen_init(&seen);
    g_assert_true(qs_agent_reader_feed(r, h->data, h->len, on_msg, &seen, &error));
    while (left) {
        guint n = MIN(left, 2048u);

        g_assert_true(qs_agent_reader_feed(r, junk, n, on_msg, &seen, &error));
        left -= n;
    }
    g_assert_no_error(error);
    g_assert_cmpuint(seen.msgs->len, ==, 1);
    g_assert_null(seen.msgs->pdata[0]);
    g_assert_cmpuint(g_array_index(seen.types, uint32_t, 0), ==, VD_AGENT_MONITORS_CONFIG);
    seen_clear(&seen);
}

static QsAgentMsg msg_of(uint32_t type, GBytes *body)
{
    gsize size;
    const uint8_t *data = g_bytes_get_data(body, &size);

    return (QsAgentMsg){ .type = type, .size = (uint32_t)size, .kept = TRUE, .data = data };
}

static void test_bodies(void)
{
    const uint32_t types[] = { VD_AGENT_CLIPBOARD_IMAGE_PNG, VD_AGENT_CLIPBOARD_UTF8_TEXT };
    uint32_t caps[1] = { (1u << VD_AGENT_CAP_CLIPBOARD_BY_DEMAND) |
                         (1u << VD_AGENT_CAP_CLIPBOARD_SELECTION) };
    g_autoptr(GError) error = NULL;
    QsAgentGrab grab;
    QsAgentClip clip;
    QsAgentCaps got;
    uint8_t sel;
    QsAgentMsg m;

    g_autoptr(GBytes) grab_sel = qs_agent_grab_body(TRUE, 1, types, 2);
    m = msg_of(VD_AGENT_CLIPBOARD_GRAB, grab_sel);
    g_assert_cmpuint(m.size, ==, 12);
    g_assert_true(qs_agent_parse_grab(&m, TRUE, &grab, &error));
    g_assert_cmpuint(grab.selection, ==, 1);
    g_assert_cmpuint(grab.n_types, ==, 2);
    g_assert_cmpuint(grab.types[1], ==, VD_AGENT_CLIPBOARD_UTF8_TEXT);

    g_autoptr(GBytes) grab_plain = qs_agent_grab_body(FALSE, 1, types, 2);
    m = msg_of(VD_AGENT_CLIPBOARD_GRAB, grab_plain);
    g_assert_cmpuint(m.size, ==, 8);
    g_assert_true(qs_agent_parse_grab(&m, FALSE, &grab, &error));
    g_assert_cmpuint(grab.selection, ==, 0);
    g_assert_cmpuint(grab.types[0], ==, VD_AGENT_CLIPBOARD_IMAGE_PNG);

    g_autoptr(GBytes) clipboard = qs_agent_clipboard_body(TRUE, 2, VD_AGENT_CLIPBOARD_UTF8_TEXT,
                                                          "héllo", 6);
    m = msg_of(VD_AGENT_CLIPBOARD, clipboard);
    g_assert_true(qs_agent_parse_clipboard(&m, TRUE, &clip, &error));
    g_assert_cmpuint(clip.selection, ==, 2);
    g_assert_cmpuint(clip.type, ==, VD_AGENT_CLIPBOARD_UTF8_TEXT);
    g_assert_cmpmem(clip.data, clip.size, "héllo", 6);

    g_autoptr(GBytes) request = qs_agent_request_body(FALSE, 0, VD_AGENT_CLIPBOARD_UTF8_TEXT);
    m = msg_of(VD_AGENT_CLIPBOARD_REQUEST, request);
    g_assert_true(qs_agent_parse_request(&m, FALSE, &clip, &error));
    g_assert_cmpuint(clip.type, ==, VD_AGENT_CLIPBOARD_UTF8_TEXT);
    /* The same without its selection header is too short. */
    g_assert_false(qs_agent_parse_request(&m, TRUE, &clip, &error));
    g_assert_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_MALFORMED);
    g_clear_error(&error);

    g_autoptr(GBytes) release = qs_agent_release_body(TRUE, 3);
    m = msg_of(VD_AGENT_CLIPBOARD_RELEASE, release);
    g_assert_false(qs_agent_parse_release(&m, TRUE, &sel, &error));
    g_assert_nonnull(strstr(error->message, "selection 3"));
    g_clear_error(&error);
    g_assert_true(qs_agent_parse_release(&m, FALSE, &sel, &error));
    g_assert_cmpuint(sel, ==, 0);

    g_autoptr(GBytes) announce = qs_agent_caps_body(TRUE, caps, 1);
    m = msg_of(VD_AGENT_ANNOUNCE_CAPABILITIES, announce);
    g_assert_true(qs_agent_parse_caps(&m, &got, &error));
    g_assert_true(got.request);
    g_assert_true(qs_agent_has_cap(got.caps, 1, VD_AGENT_CAP_CLIPBOARD_SELECTION));
    g_assert_false(qs_agent_has_cap(got.caps, 1, VD_AGENT_CAP_CLIPBOARD_GRAB_SERIAL));
    g_assert_false(qs_agent_has_cap(got.caps, 1, 40));
}

/* A MONITORS_CONFIG body as spice-gtk writes it: {count, flags} then
 * {height, width, depth, x, y} per monitor, then {height_mm, width_mm}
 * per monitor with FLAG_PHYSICAL_SIZE. */
static GBytes *monitors_body(uint32_t count, uint32_t flags, guint n_given,
                             const uint32_t (*mon)[5], const uint16_t (*mm)[2])
{
    GByteArray *b = g_byte_array_new();

    qs_wire_u32(b, count);
    qs_wire_u32(b, flags);
    for (guint i = 0; i < n_given; i++) {
        for (guint k = 0; k < 5; k++) {
            qs_wire_u32(b, mon[i][k]);
        }
    }
    for (guint i = 0; mm && i < n_given; i++) {
        qs_wire_u16(b, mm[i][0]);
        qs_wire_u16(b, mm[i][1]);
    }
    return g_byte_array_free_to_bytes(b);
}

static gboolean parse_monitors(GBytes *body, QsAgentMonitors *mon, GError **error)
{
    QsAgentMsg m = msg_of(VD_AGENT_MONITORS_CONFIG, body);

    return qs_agent_parse_monitors(&m, mon, error);
}

static void test_monitors(void)
{
    static const uint32_t two[2][5] = {
        { 768, 1024, 32, 0, 0 },
        { 600, 800, 32, 1024, (uint32_t)-20 },
    };
    static const uint16_t mm[2][2] = { { 203, 271 }, { 150, 200 } };
    g_autoptr(GError) error = NULL;
    QsAgentMonitors mon;
    QsAgentMonitor m;

    /* Two monitors with positions and physical sizes; an unknown flag is
     * dropped, not refused. */
    g_autoptr(GBytes) full = monitors_body(2, VD_AGENT_CONFIG_MONITORS_FLAG_USE_POS |
                                              VD_AGENT_CONFIG_MONITORS_FLAG_PHYSICAL_SIZE |
                                              0x100, 2, two, mm);
    g_assert_true(parse_monitors(full, &mon, &error));
    g_assert_no_error(error);
    g_assert_cmpuint(mon.n_monitors, ==, 2);
    g_assert_cmphex(mon.flags, ==, VD_AGENT_CONFIG_MONITORS_FLAG_USE_POS |
                                   VD_AGENT_CONFIG_MONITORS_FLAG_PHYSICAL_SIZE);
    g_assert_cmpuint(mon.monitors[0].width, ==, 1024);
    g_assert_cmpuint(mon.monitors[0].height, ==, 768);
    g_assert_cmpuint(mon.monitors[0].width_mm, ==, 271);
    g_assert_cmpuint(mon.monitors[0].height_mm, ==, 203);
    g_assert_cmpint(mon.monitors[1].x, ==, 1024);
    g_assert_cmpint(mon.monitors[1].y, ==, -20);
    g_assert_true(qs_agent_monitor_check(&mon.monitors[0], &error));
    g_assert_true(qs_agent_monitor_check(&mon.monitors[1], &error));

    /* Without USE_POS the position is not taken; without PHYSICAL_SIZE no
     * sizes are read (and none need to be there). */
    g_autoptr(GBytes) plain = monitors_body(2, 0, 2, two, NULL);
    g_assert_true(parse_monitors(plain, &mon, &error));
    g_assert_cmpint(mon.monitors[1].x, ==, 0);
    g_assert_cmpint(mon.monitors[1].y, ==, 0);
    g_assert_cmpuint(mon.monitors[1].width_mm, ==, 0);

    /* Every monitor disabled (spice-gtk sends that): no error here. */
    g_autoptr(GBytes) none = monitors_body(0, 0, 0, two, NULL);
    g_assert_true(parse_monitors(none, &mon, &error));
    g_assert_cmpuint(mon.n_monitors, ==, 0);

    /* Structure errors: too many, cut short (also the sizes a PHYSICAL_SIZE
     * flag promises), not even the header. */
    g_autoptr(GBytes) many = monitors_body(QS_AGENT_MONITORS_MAX + 1, 0, 2, two, NULL);
    g_assert_false(parse_monitors(many, &mon, &error));
    g_assert_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_TOO_BIG);
    g_clear_error(&error);
    g_autoptr(GBytes) short_mon = monitors_body(3, 0, 2, two, NULL);
    g_assert_false(parse_monitors(short_mon, &mon, &error));
    g_assert_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_MALFORMED);
    g_clear_error(&error);
    g_autoptr(GBytes) short_mm = monitors_body(2, VD_AGENT_CONFIG_MONITORS_FLAG_PHYSICAL_SIZE,
                                               2, two, NULL);
    g_assert_false(parse_monitors(short_mm, &mon, &error));
    g_assert_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_MALFORMED);
    g_clear_error(&error);
    g_autoptr(GBytes) tiny = g_bytes_new("\1\0\0\0", 4);
    g_assert_false(parse_monitors(tiny, &mon, &error));
    g_assert_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_MALFORMED);
    g_clear_error(&error);

    /* Values: the bounds are inclusive; disabled (0x0), too small, too big
     * and far-off positions are refused. */
    m = (QsAgentMonitor){ .width = QS_AGENT_MONITOR_MIN, .height = QS_AGENT_MONITOR_MAX };
    g_assert_true(qs_agent_monitor_check(&m, &error));
    m.x = -QS_AGENT_MONITOR_POS_MAX;
    m.y = QS_AGENT_MONITOR_POS_MAX;
    g_assert_true(qs_agent_monitor_check(&m, &error));
    g_assert_no_error(error);
    const QsAgentMonitor bad[] = {
        { .width = 0, .height = 0 },
        { .width = 0, .height = 600 },
        { .width = QS_AGENT_MONITOR_MIN - 1, .height = 600 },
        { .width = 800, .height = QS_AGENT_MONITOR_MAX + 1 },
        { .width = UINT32_MAX, .height = UINT32_MAX },
        { .width = 800, .height = 600, .x = QS_AGENT_MONITOR_POS_MAX + 1 },
        { .width = 800, .height = 600, .y = INT32_MIN },
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_assert_false(qs_agent_monitor_check(&bad[i], &error));
        g_assert_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_MALFORMED);
        g_clear_error(&error);
    }

    /* For the guest's agent: the same monitors, without the physical sizes
     * and their flag (spice-vdagentd wants the size exact), unknown flags
     * gone; the header and 20 bytes a monitor. */
    g_assert_true(parse_monitors(full, &mon, &error));
    g_autoptr(GBytes) for_guest = qs_agent_monitors_body_for_guest(&mon);
    g_autoptr(GBytes) want = monitors_body(2, VD_AGENT_CONFIG_MONITORS_FLAG_USE_POS, 2, two,
                                           NULL);
    g_assert_cmpuint(g_bytes_get_size(for_guest), ==, 8 + 2 * 20);
    g_assert_cmpmem(g_bytes_get_data(for_guest, NULL), g_bytes_get_size(for_guest),
                    g_bytes_get_data(want, NULL), g_bytes_get_size(want));

    g_autoptr(GBytes) reply = qs_agent_reply_body(VD_AGENT_MONITORS_CONFIG, VD_AGENT_ERROR);
    g_assert_cmpmem(g_bytes_get_data(reply, NULL), g_bytes_get_size(reply),
                    "\2\0\0\0\2\0\0\0", 8);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/channels/agent/roundtrip", test_roundtrip);
    g_test_add_func("/channels/agent/limits", test_limits);
    g_test_add_func("/channels/agent/skip", test_skip);
    g_test_add_func("/channels/agent/bodies", test_bodies);
    g_test_add_func("/channels/agent/monitors", test_monitors);
    return g_test_run();
}
