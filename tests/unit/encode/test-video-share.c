/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the shared video encoders: tiers, the order of a seat's frames, keyframes for joiners, falling behind. */
#include "encode/qs-video-share.h"
#include "encode/qs-video.h"
#include "flow/qs-share-policy.h"

#include <string.h>

#define SIDE 64

typedef struct {
    guint answers;
    gboolean shared, flush, ok;
    GBytes *data;               /* the last frame's */
} Got;

static void on_frame(QsVideoSeat *seat, const QsSharedFrame *f, gpointer data)
{
    Got *g = data;

    (void)seat;
    g->answers++;
    g->shared = f->shared;
    g->flush = f->flush;
    g->ok = f->ok;
    g_clear_pointer(&g->data, g_bytes_unref);
    g->data = f->data ? g_bytes_ref(f->data) : NULL;
}

static void got_clear(Got *g)
{
    g_clear_pointer(&g->data, g_bytes_unref);
}

static uint8_t *pixels(guint n)
{
    uint8_t *p = g_malloc(SIDE * SIDE * 4);

    for (guint i = 0; i < SIDE * SIDE; i++) {
        p[i * 4] = (uint8_t)(i * 3 + n * 17);
        p[i * 4 + 1] = (uint8_t)(i / SIDE * 5 + n * 11);
        p[i * 4 + 2] = (uint8_t)(n * 29);
        p[i * 4 + 3] = 0;
    }
    return p;
}

/* Runs the main loop until `g` has `n` answers (bounded). */
static void wait_answers(const Got *g, guint n)
{
    gint64 end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;

    while (g->answers < n && g_get_monotonic_time() < end) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(500);
    }
    g_assert_cmpuint(g->answers, ==, n);
}

/* An H.264 IDR slice (NAL type 5) in the Annex-B access unit? */
static gboolean has_idr(GBytes *b)
{
    gsize n;
    const uint8_t *p = g_bytes_get_data(b, &n);

    for (gsize i = 0; i + 3 < n; i++) {
        if (p[i] == 0 && p[i + 1] == 0 && p[i + 2] == 1 && (p[i + 3] & 0x1f) == 5) {
            return TRUE;
        }
    }
    return FALSE;
}

/* With flow's rules, as the channels make it; the share holds the queue. */
static QsVideoShare *share_new(gboolean enabled)
{
    g_autoptr(QsEncodeQueue) q = qs_encode_queue_new();

    return qs_video_share_new(q, &qs_share_rules, enabled);
}

static const QsVideoShape lan = { QS_VIDEO_CODEC_H264, 10, 20, SIDE, SIDE, 25, 8000000, 0 };

/* The head's request is encoded once; the seat behind gets those bytes. */
static void ask(QsVideoSeat *seat, guint n, uint32_t bitrate)
{
    gboolean head = qs_video_seat_needs_pixels(seat, bitrate, 1);

    qs_video_seat_request(seat, FALSE, head ? pixels(n) : NULL, 0);
}

static void test_two_viewers_one_encoder(void)
{
    QsVideoShare *share = share_new(TRUE);
    guint base = qs_video_encoders_alive();
    Got a = { 0 }, b = { 0 };
    QsVideoSeat *sa = qs_video_seat_new(share, &lan, on_frame, &a);
    QsVideoSeat *sb = qs_video_seat_new(share, &lan, on_frame, &b);

    g_assert_cmpuint(qs_video_share_n_tiers(share), ==, 1);
    g_assert_cmpuint(qs_video_seat_peers(sa), ==, 2);
    /* A at the head reads pixels; B's first frame is A's (in flight). */
    g_assert_true(qs_video_seat_needs_pixels(sa, lan.bitrate, 1));
    qs_video_seat_request(sa, FALSE, pixels(0), 0);
    g_assert_false(qs_video_seat_needs_pixels(sb, lan.bitrate, 1));
    qs_video_seat_request(sb, FALSE, NULL, 0);
    g_assert_cmpuint(a.answers + b.answers, ==, 0);     /* never inside the request */
    wait_answers(&a, 1);
    wait_answers(&b, 1);
    g_assert_true(a.ok && b.ok && !a.shared && b.shared);
    g_assert_true(has_idr(a.data));
    g_assert_true(g_bytes_equal(a.data, b.data));
    g_assert_cmpuint(qs_video_encoders_alive(), ==, base + 1);

    /* A runs three frames ahead; B takes them in order, each A's bytes. */
    for (guint i = 1; i <= 3; i++) {
        ask(sa, i, lan.bitrate);
        wait_answers(&a, 1 + i);
    }
    for (guint i = 1; i <= 3; i++) {
        g_autoptr(GBytes) want = NULL;

        g_assert_false(qs_video_seat_needs_pixels(sb, lan.bitrate, 1));
        qs_video_seat_request(sb, FALSE, NULL, 0);
        wait_answers(&b, 1 + i);
        g_assert_true(b.shared && !b.flush);
        want = g_bytes_ref(b.data);
        g_assert_false(has_idr(want));
    }
    g_assert_true(g_bytes_equal(a.data, b.data));       /* both at frame 3 */
    g_assert_true(qs_video_seat_needs_pixels(sb, lan.bitrate, 1));   /* B at the head now */
    qs_video_seat_free(sa);
    qs_video_seat_free(sb);
    g_assert_cmpuint(qs_video_share_n_tiers(share), ==, 0);
    g_assert_cmpuint(qs_video_encoders_alive(), ==, base);
    qs_video_share_free(share);
    got_clear(&a);
    got_clear(&b);
}

/* A viewer that joins a running tier starts with a keyframe, and the
 * others get it too; a flush asked before it has any frame is answered
 * without an encode. */
static void test_joiner_gets_keyframe(void)
{
    QsVideoShare *share = share_new(TRUE);
    Got a = { 0 }, b = { 0 };
    QsVideoSeat *sa = qs_video_seat_new(share, &lan, on_frame, &a);
    QsVideoSeat *sb;

    for (guint i = 0; i < 3; i++) {
        ask(sa, i, lan.bitrate);
        wait_answers(&a, i + 1);
    }
    g_assert_false(has_idr(a.data));
    sb = qs_video_seat_new(share, &lan, on_frame, &b);
    qs_video_seat_needs_pixels(sb, lan.bitrate, 1);
    qs_video_seat_request(sb, TRUE, NULL, 0);
    wait_answers(&b, 1);
    g_assert_true(b.ok && b.flush && !b.data);
    /* B's first real frame, from its own read: a keyframe A gets too. */
    g_assert_true(qs_video_seat_needs_pixels(sb, lan.bitrate, 1));
    qs_video_seat_request(sb, FALSE, pixels(9), 0);
    wait_answers(&b, 2);
    g_assert_true(has_idr(b.data) && !b.shared);
    ask(sa, 10, lan.bitrate);
    wait_answers(&a, 4);
    g_assert_true(a.shared && g_bytes_equal(a.data, b.data));
    qs_video_seat_free(sa);
    qs_video_seat_free(sb);
    qs_video_share_free(share);
    got_clear(&a);
    got_clear(&b);
}

/* A seat more than QS_SHARE_CATCH_UP_FRAMES frames behind jumps to the
 * head and starts again at a keyframe (everyone gets it); behind again
 * soon after, it goes on alone. */
static void test_behind_catches_up_then_goes_solo(void)
{
    QsVideoShare *share = share_new(TRUE);
    guint base = qs_video_encoders_alive();
    Got a = { 0 }, b = { 0 };
    QsVideoSeat *sa = qs_video_seat_new(share, &lan, on_frame, &a);
    QsVideoSeat *sb = qs_video_seat_new(share, &lan, on_frame, &b);
    guint n = 0;

    for (guint i = 0; i < QS_SHARE_CATCH_UP_FRAMES + 2; i++, n++) {
        ask(sa, n, lan.bitrate);
        wait_answers(&a, n + 1);
    }
    g_assert_true(qs_video_seat_needs_pixels(sb, lan.bitrate, 1));   /* caught up */
    g_assert_cmpuint(qs_video_seat_peers(sb), ==, 2);
    qs_video_seat_request(sb, FALSE, pixels(50), 0);
    wait_answers(&b, 1);
    g_assert_true(has_idr(b.data) && !b.shared);
    ask(sa, n++, lan.bitrate);                      /* A takes B's keyframe */
    wait_answers(&a, n);
    g_assert_true(a.shared && has_idr(a.data));
    g_assert_cmpuint(qs_video_encoders_alive(), ==, base + 1);

    for (guint i = 0; i < QS_SHARE_CATCH_UP_FRAMES + 2; i++, n++) {
        ask(sa, n, lan.bitrate);
        wait_answers(&a, n + 1);
    }
    g_assert_true(qs_video_seat_needs_pixels(sb, lan.bitrate, 1));   /* alone now */
    g_assert_cmpuint(qs_video_seat_peers(sb), ==, 1);
    g_assert_cmpuint(qs_video_seat_peers(sa), ==, 1);
    g_assert_cmpuint(qs_video_share_n_tiers(share), ==, 2);
    qs_video_seat_request(sb, FALSE, pixels(60), 0);
    wait_answers(&b, 2);
    g_assert_true(has_idr(b.data) && !b.shared);
    g_assert_cmpuint(qs_video_encoders_alive(), ==, base + 2);
    /* Its tier stays its own: a new viewer joins A's. */
    {
        Got c = { 0 };
        QsVideoSeat *sc = qs_video_seat_new(share, &lan, on_frame, &c);

        g_assert_cmpuint(qs_video_seat_peers(sa), ==, 2);
        qs_video_seat_free(sc);
    }
    qs_video_seat_free(sa);
    qs_video_seat_free(sb);
    qs_video_share_free(share);
    got_clear(&a);
    got_clear(&b);
}

/* Other rate classes, rectangles or codecs do not share; a seat whose rate
 * leaves its class moves; a share not enabled (QS_STREAM_SHARE=0) shares
 * nothing. */
static void test_tiers_apart(void)
{
    QsVideoShare *share = share_new(TRUE);
    QsVideoShape slow = lan, moved = lan, mjpeg = lan;
    Got g[4] = { 0 };
    QsVideoSeat *s[4];

    slow.bitrate = 1000000;
    moved.x += 2;
    mjpeg.codec = QS_VIDEO_CODEC_MJPEG;
    s[0] = qs_video_seat_new(share, &lan, on_frame, &g[0]);
    s[1] = qs_video_seat_new(share, &slow, on_frame, &g[1]);
    s[2] = qs_video_seat_new(share, &moved, on_frame, &g[2]);
    s[3] = qs_video_seat_new(share, &mjpeg, on_frame, &g[3]);
    g_assert_cmpuint(qs_video_share_n_tiers(share), ==, 4);
    qs_video_seat_free(s[2]);
    qs_video_seat_free(s[3]);
    /* 8 Mbit/s -> 0.95 Mbit/s: s[0] moves to s[1]'s class (1 Mbit/s). */
    g_assert_true(qs_video_seat_needs_pixels(s[0], 950000, 1));
    g_assert_cmpuint(qs_video_seat_peers(s[1]), ==, 2);
    qs_video_seat_free(s[0]);
    qs_video_seat_free(s[1]);
    g_assert_cmpuint(qs_video_share_n_tiers(share), ==, 0);

    /* Sharing at 8 Mbit/s: 9 Mbit/s is the next class but within half a
     * class of this one, so the seat stays; 12 Mbit/s moves it. */
    s[0] = qs_video_seat_new(share, &lan, on_frame, &g[0]);
    s[1] = qs_video_seat_new(share, &lan, on_frame, &g[1]);
    qs_video_seat_needs_pixels(s[0], 9000000, 1);
    g_assert_cmpuint(qs_video_seat_peers(s[1]), ==, 2);
    qs_video_seat_needs_pixels(s[0], 12000000, 1);
    g_assert_cmpuint(qs_video_seat_peers(s[1]), ==, 1);
    g_assert_cmpuint(qs_video_share_n_tiers(share), ==, 2);
    /* Two viewers alone in tiers of one class come together. */
    qs_video_seat_needs_pixels(s[1], 12000000, 1);
    g_assert_cmpuint(qs_video_seat_peers(s[0]), ==, 2);
    g_assert_cmpuint(qs_video_share_n_tiers(share), ==, 1);
    qs_video_seat_free(s[0]);
    qs_video_seat_free(s[1]);

    qs_video_share_free(share);
    share = share_new(FALSE);
    s[0] = qs_video_seat_new(share, &lan, on_frame, &g[0]);
    s[1] = qs_video_seat_new(share, &lan, on_frame, &g[1]);
    g_assert_cmpuint(qs_video_seat_peers(s[0]), ==, 1);
    qs_video_seat_free(s[0]);
    qs_video_seat_free(s[1]);
    qs_video_share_free(share);
}

/* A seat whose plan lowers its frame rate leaves a tier at the full rate
 * at once (a keyframe), not after falling behind; seats lowered alike
 * share; raised again, a seat leaves them. */
static void test_lowered_seat_moves(void)
{
    QsVideoShare *share = share_new(TRUE);
    Got a = { 0 }, b = { 0 };
    QsVideoSeat *sa = qs_video_seat_new(share, &lan, on_frame, &a);
    QsVideoSeat *sb = qs_video_seat_new(share, &lan, on_frame, &b);

    ask(sa, 0, lan.bitrate);
    wait_answers(&a, 1);
    g_assert_cmpuint(qs_video_seat_peers(sa), ==, 2);
    /* B's plan halves its frame rate: it starts again alone, at the head. */
    g_assert_true(qs_video_seat_needs_pixels(sb, lan.bitrate, 2));
    g_assert_cmpuint(qs_video_seat_peers(sa), ==, 1);
    g_assert_cmpuint(qs_video_seat_peers(sb), ==, 1);
    g_assert_cmpuint(qs_video_share_n_tiers(share), ==, 2);
    qs_video_seat_request(sb, FALSE, pixels(1), 0);
    wait_answers(&b, 1);
    g_assert_true(has_idr(b.data) && !b.shared);
    /* Its flush is its own tier's: A's next frame is A's own encode. */
    g_assert_true(qs_video_seat_needs_pixels(sb, lan.bitrate, 2));
    qs_video_seat_request(sb, TRUE, NULL, 0);
    wait_answers(&b, 2);
    g_assert_true(b.flush && !b.shared);
    ask(sa, 2, lan.bitrate);
    wait_answers(&a, 2);
    g_assert_true(!a.shared && !a.flush);

    /* A lowered alike joins B (a keyframe), and they share again. */
    g_assert_true(qs_video_seat_needs_pixels(sa, lan.bitrate, 2));
    g_assert_cmpuint(qs_video_seat_peers(sb), ==, 2);
    g_assert_cmpuint(qs_video_share_n_tiers(share), ==, 1);
    qs_video_seat_request(sa, FALSE, pixels(3), 0);
    wait_answers(&a, 3);
    g_assert_true(has_idr(a.data) && !a.shared);
    g_assert_false(qs_video_seat_needs_pixels(sb, lan.bitrate, 2));
    qs_video_seat_request(sb, FALSE, NULL, 0);
    wait_answers(&b, 3);
    g_assert_true(b.shared && g_bytes_equal(a.data, b.data));

    /* Raised again, A leaves. */
    g_assert_true(qs_video_seat_needs_pixels(sa, lan.bitrate, 1));
    g_assert_cmpuint(qs_video_seat_peers(sb), ==, 1);
    g_assert_cmpuint(qs_video_share_n_tiers(share), ==, 2);
    qs_video_seat_free(sa);
    qs_video_seat_free(sb);
    qs_video_share_free(share);
    got_clear(&a);
    got_clear(&b);
}

/* A seat freed while its frame is encoding is never answered; the tier and
 * its encoder go when the worker is done. A tier outlives its share. */
static void test_free_while_encoding(void)
{
    QsVideoShare *share = share_new(TRUE);
    guint base = qs_video_encoders_alive();
    Got a = { 0 };
    QsVideoSeat *sa = qs_video_seat_new(share, &lan, on_frame, &a);
    gint64 end;

    ask(sa, 0, lan.bitrate);
    qs_video_share_free(share);
    qs_video_seat_free(sa);
    /* The worker makes the encoder, encodes, hands both back. */
    for (int i = 0; i < 500; i++) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
    end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
    while (qs_video_encoders_alive() != base && g_get_monotonic_time() < end) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
    g_assert_cmpuint(qs_video_encoders_alive(), ==, base);
    g_assert_cmpuint(a.answers, ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/encode/video-share/two-viewers-one-encoder",
                    test_two_viewers_one_encoder);
    g_test_add_func("/encode/video-share/joiner-keyframe", test_joiner_gets_keyframe);
    g_test_add_func("/encode/video-share/behind-catches-up-then-solo",
                    test_behind_catches_up_then_goes_solo);
    g_test_add_func("/encode/video-share/tiers-apart", test_tiers_apart);
    g_test_add_func("/encode/video-share/lowered-seat-moves", test_lowered_seat_moves);
    g_test_add_func("/encode/video-share/free-while-encoding", test_free_while_encoding);
    return g_test_run();
}
