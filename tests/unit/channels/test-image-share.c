/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the lossless images shared by a console's viewers: reuse only for the same codec, place and pixels; ids; bounds. */
#include "channels/qs-image-share.h"
#include "wire/qs-msg.h"

#include <string.h>

#define W 48
#define H 32

static uint8_t *pixels(uint8_t seed)
{
    uint8_t *p = g_malloc(W * H * 4);

    for (guint i = 0; i < W * H * 4; i++) {
        p[i] = (uint8_t)(i / 7 + seed);
    }
    return p;
}

static uint64_t image_id(GBytes *msg)
{
    const uint8_t *d = g_bytes_get_data(msg, NULL);
    uint64_t id = 0;

    for (guint i = 0; i < 8; i++) {
        id |= (uint64_t)d[QS_DRAW_COPY_HEADER_SIZE + i] << (8 * i);
    }
    return id;
}

typedef struct {
    guint calls;
    GBytes *msg;
} Waited;

static void on_ready(GBytes *msg, QsImageCodec used, gpointer data)
{
    Waited *w = data;

    (void)used;
    w->calls++;
    w->msg = msg;
}

static GBytes *draw(QsImageShare *s, const uint8_t *px, int32_t x, QsImageCodec codec,
                    uint64_t id, gboolean *shared)
{
    QsPixelRect r = { px, W * 4, W, H };
    Waited never = { 0 };
    QsImageShareAnswer ans = qs_image_share_ask(s, x, 5, &r, codec, id, on_ready, &never);
    QsImageCodec used;
    GBytes *msg;

    /* As the display channel does: a kept copy, else its own encode,
     * made for the others; nothing else is being made here. */
    g_assert_null(ans.wait);
    *shared = ans.msg != NULL;
    if (ans.msg) {
        g_assert_null(ans.making);
        return ans.msg;
    }
    msg = qs_msg_draw_copy(0, x, 5, &r, codec, id, &used);
    if (ans.making) {
        qs_image_share_made(s, ans.making, used, msg);
    }
    return msg;
}

static void test_one_viewer_keeps_nothing(void)
{
    g_autoptr(QsImageShare) s = qs_image_share_new();
    g_autofree uint8_t *px = pixels(1);
    gboolean shared;

    qs_image_share_viewer_add(s);
    g_autoptr(GBytes) a = draw(s, px, 0, QS_IMAGE_CODEC_LZ4, 1, &shared);
    g_autoptr(GBytes) b = draw(s, px, 0, QS_IMAGE_CODEC_LZ4, 2, &shared);
    g_assert_false(shared);
    g_assert_cmpuint(qs_image_share_n_kept(s), ==, 0);
    qs_image_share_viewer_remove(s);
}

static void test_same_pixels_shared_with_own_id(void)
{
    g_autoptr(QsImageShare) s = qs_image_share_new();
    g_autofree uint8_t *px = pixels(1);
    g_autofree uint8_t *other = pixels(1);
    gboolean shared;
    QsPixelRect r = { px, W * 4, W, H };

    qs_image_share_viewer_add(s);
    qs_image_share_viewer_add(s);
    g_autoptr(GBytes) a = draw(s, px, 0, QS_IMAGE_CODEC_LZ4, 7, &shared);
    g_assert_false(shared);
    g_autoptr(GBytes) b = draw(s, px, 0, QS_IMAGE_CODEC_LZ4, 42, &shared);
    g_assert_true(shared);
    g_assert_cmpuint(image_id(a), ==, 7);
    g_assert_cmpuint(image_id(b), ==, 42);
    /* Byte for byte what an encode with id 42 makes. */
    g_autoptr(GBytes) want = qs_msg_draw_copy(0, 0, 5, &r, QS_IMAGE_CODEC_LZ4, 42, NULL);
    g_assert_true(g_bytes_equal(b, want));

    /* One byte off, another place, another codec: encoded anew. */
    other[W * H * 2] ^= 1;
    g_autoptr(GBytes) c = draw(s, other, 0, QS_IMAGE_CODEC_LZ4, 43, &shared);
    g_assert_false(shared);
    g_autoptr(GBytes) d = draw(s, px, 16, QS_IMAGE_CODEC_LZ4, 44, &shared);
    g_assert_false(shared);
    g_autoptr(GBytes) e = draw(s, px, 0, QS_IMAGE_CODEC_LZ, 45, &shared);
    g_assert_false(shared);
    g_assert_cmpuint(qs_image_share_n_kept(s), ==, 4);

    /* Down to one viewer: nothing kept. */
    qs_image_share_viewer_remove(s);
    g_assert_cmpuint(qs_image_share_n_kept(s), ==, 0);
    qs_image_share_viewer_remove(s);
}

static void test_bounded(void)
{
    g_autoptr(QsImageShare) s = qs_image_share_new();
    gboolean shared;

    qs_image_share_viewer_add(s);
    qs_image_share_viewer_add(s);
    for (guint i = 0; i < QS_IMAGE_SHARE_MAX_ENTRIES + 5; i++) {
        g_autofree uint8_t *px = pixels((uint8_t)i);
        g_autoptr(GBytes) m = draw(s, px, 0, QS_IMAGE_CODEC_LZ4, i, &shared);

        g_assert_false(shared);
    }
    g_assert_cmpuint(qs_image_share_n_kept(s), ==, QS_IMAGE_SHARE_MAX_ENTRIES);
    /* The newest are the ones kept. */
    {
        g_autofree uint8_t *px = pixels(QS_IMAGE_SHARE_MAX_ENTRIES + 4);
        g_autoptr(GBytes) m = draw(s, px, 0, QS_IMAGE_CODEC_LZ4, 99, &shared);

        g_assert_true(shared);
    }
    {
        g_autofree uint8_t *px = pixels(0);
        g_autoptr(GBytes) m = draw(s, px, 0, QS_IMAGE_CODEC_LZ4, 98, &shared);

        g_assert_false(shared);
    }
    qs_image_share_viewer_remove(s);
    qs_image_share_viewer_remove(s);
}

/* A second viewer that asks while the first encodes waits for it and gets
 * it with its own id; one that withdraws is never called; when the image
 * is not made, or the share forgets it meanwhile, the waiters are told
 * NULL (they encode it themselves). */
static void test_wait_while_made(void)
{
    g_autoptr(QsImageShare) s = qs_image_share_new();
    g_autofree uint8_t *px = pixels(3);
    QsPixelRect r = { px, W * 4, W, H };
    Waited b = { 0 }, c = { 0 }, d = { 0 }, never = { 0 };
    QsImageShareAnswer ans;
    QsImageShareMaking *making;
    QsImageShareWait *wc;
    QsImageCodec used;

    qs_image_share_viewer_add(s);
    qs_image_share_viewer_add(s);
    ans = qs_image_share_ask(s, 0, 5, &r, QS_IMAGE_CODEC_LZ4, 1, on_ready, &never);
    making = ans.making;
    g_assert_nonnull(making);
    /* Being made: not kept yet, but waited for; in another codec it is
     * another image, made by its asker. */
    ans = qs_image_share_ask(s, 0, 5, &r, QS_IMAGE_CODEC_LZ, 2, on_ready, &b);
    g_assert_null(ans.msg);
    g_assert_null(ans.wait);
    g_assert_nonnull(ans.making);
    qs_image_share_made(s, ans.making, QS_IMAGE_CODEC_LZ, NULL);
    ans = qs_image_share_ask(s, 0, 5, &r, QS_IMAGE_CODEC_LZ4, 2, on_ready, &b);
    g_assert_null(ans.msg);
    g_assert_null(ans.making);
    g_assert_nonnull(ans.wait);
    wc = qs_image_share_ask(s, 0, 5, &r, QS_IMAGE_CODEC_LZ4, 3, on_ready, &c).wait;
    g_assert_nonnull(wc);
    qs_image_share_withdraw(s, wc);
    {
        g_autoptr(GBytes) a = qs_msg_draw_copy(0, 0, 5, &r, QS_IMAGE_CODEC_LZ4, 1, &used);
        g_autoptr(GBytes) want = qs_msg_draw_copy(0, 0, 5, &r, QS_IMAGE_CODEC_LZ4, 2, NULL);

        qs_image_share_made(s, making, used, a);
        g_assert_cmpuint(b.calls, ==, 1);
        g_assert_cmpuint(c.calls, ==, 0);
        g_assert_cmpuint(image_id(b.msg), ==, 2);
        g_assert_true(g_bytes_equal(b.msg, want));
        g_bytes_unref(b.msg);
    }
    g_assert_cmpuint(qs_image_share_n_kept(s), ==, 1);

    /* Not made: the waiter is told to encode it. */
    px[0] ^= 1;
    making = qs_image_share_ask(s, 0, 5, &r, QS_IMAGE_CODEC_LZ4, 3, on_ready, &never).making;
    g_assert_nonnull(making);
    g_assert_nonnull(qs_image_share_ask(s, 0, 5, &r, QS_IMAGE_CODEC_LZ4, 4, on_ready, &d).wait);
    qs_image_share_made(s, making, QS_IMAGE_CODEC_LZ4, NULL);
    g_assert_cmpuint(d.calls, ==, 1);
    g_assert_null(d.msg);
    g_assert_cmpuint(qs_image_share_n_kept(s), ==, 1);

    /* Forgotten while made (down to one viewer): the waiter is told now,
     * the maker's later word frees it. */
    d = (Waited){ 0 };
    making = qs_image_share_ask(s, 0, 5, &r, QS_IMAGE_CODEC_LZ4, 4, on_ready, &never).making;
    g_assert_nonnull(making);
    g_assert_nonnull(qs_image_share_ask(s, 0, 5, &r, QS_IMAGE_CODEC_LZ4, 5, on_ready, &d).wait);
    qs_image_share_viewer_remove(s);
    g_assert_cmpuint(d.calls, ==, 1);
    g_assert_null(d.msg);
    g_assert_cmpuint(qs_image_share_n_kept(s), ==, 0);
    {
        g_autoptr(GBytes) a = qs_msg_draw_copy(0, 0, 5, &r, QS_IMAGE_CODEC_LZ4, 6, &used);

        qs_image_share_made(s, making, used, a);
    }
    g_assert_cmpuint(qs_image_share_n_kept(s), ==, 0);
    ans = qs_image_share_ask(s, 0, 5, &r, QS_IMAGE_CODEC_LZ4, 7, on_ready, &never);
    g_assert_null(ans.msg);
    g_assert_null(ans.wait);
    g_assert_null(ans.making);
    g_assert_cmpuint(never.calls, ==, 0);
    qs_image_share_viewer_remove(s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/channels/image-share/one-viewer", test_one_viewer_keeps_nothing);
    g_test_add_func("/channels/image-share/same-pixels", test_same_pixels_shared_with_own_id);
    g_test_add_func("/channels/image-share/bounded", test_bounded);
    g_test_add_func("/channels/image-share/wait-while-made", test_wait_while_made);
    return g_test_run();
}
