/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the set-1 scancode to qnum decoder, with the byte sequences spice-gtk sends. */
#include "wire/qs-scancode.h"

typedef struct {
    GString *log;
} Events;

static void on_key(uint32_t qnum, gboolean down, gpointer user_data)
{
    Events *ev = user_data;

    g_string_append_printf(ev->log, "%s%02x ", down ? "+" : "-", qnum);
}

/* Decodes `bytes` with a fresh decoder (or `dec`) and returns the event log. */
static char *decode(QsScancodeDecoder *dec, const uint8_t *bytes, size_t n)
{
    Events ev = { g_string_new(NULL) };
    QsScancodeDecoder local;

    if (!dec) {
        qs_scancode_decoder_init(&local);
        dec = &local;
    }
    qs_scancode_feed(dec, bytes, n, on_key, &ev);
    return g_string_free(ev.log, FALSE);
}

#define CHECK(expect, ...)                                                    \
    do {                                                                      \
        static const uint8_t b_[] = { __VA_ARGS__ };                          \
        g_autofree char *got_ = decode(NULL, b_, sizeof(b_));                 \
        g_assert_cmpstr(got_, ==, expect);                                    \
    } while (0)

static void test_plain(void)
{
    CHECK("+1e -1e ", 0x1e, 0x9e);          /* A */
    CHECK("+1c -1c ", 0x1c, 0x9c);          /* Enter, as KEY_SCANCODE sends it */
    CHECK("+3a ", 0x3a);                    /* Caps Lock down */
    CHECK("", 0x00, 0xff);                  /* no key */
}

static void test_extended(void)
{
    CHECK("+c8 -c8 ", 0xe0, 0x48, 0xe0, 0xc8);      /* Up arrow */
    CHECK("+9d -9d ", 0xe0, 0x1d, 0xe0, 0x9d);      /* Right Ctrl */
    CHECK("+b7 -b7 ", 0xe0, 0x2a, 0xe0, 0x37,       /* PrintScreen with fake shifts */
          0xe0, 0xb7, 0xe0, 0xaa);
    CHECK("+c6 -c6 ", 0xe0, 0x46, 0xe0, 0xc6);      /* Ctrl+Break */
    CHECK("+9c ", 0xe0, 0xe0, 0x1c);                /* a repeated prefix */
}

static void test_pause(void)
{
    QsScancodeDecoder dec;
    g_autofree char *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    static const uint8_t hw[] = { 0xe1, 0x1d, 0x45, 0xe1, 0x9d, 0xc5 };
    static const uint8_t down1[] = { 0xe1, 0x1d }, down2[] = { 0x45 };
    static const uint8_t up1[] = { 0xe1, 0x9d }, up2[] = { 0xc5 };

    /* The hardware sequence, all at once (KEY_SCANCODE). */
    a = decode(NULL, hw, sizeof(hw));
    g_assert_cmpstr(a, ==, "+c6 -c6 ");

    /* spice-gtk: KEY_DOWN e1 1d, KEY_DOWN 45, KEY_UP e1 9d, KEY_UP c5. */
    qs_scancode_decoder_init(&dec);
    b = decode(&dec, down1, 2);
    g_assert_cmpstr(b, ==, "");
    c = decode(&dec, down2, 1);
    g_assert_cmpstr(c, ==, "+c6 ");
    g_free(b);
    b = decode(&dec, up1, 2);
    g_assert_cmpstr(b, ==, "");
    d = decode(&dec, up2, 1);
    g_assert_cmpstr(d, ==, "-c6 ");

    /* A broken E1 sequence does not swallow the next real key. */
    CHECK("+1e ", 0xe1, 0x1e);
    /* E1 1D not followed by 45 is dropped; the byte after it counts. */
    CHECK("-1d ", 0xe1, 0x1d, 0x9d);
}

static void test_single_byte_keys(void)
{
    CHECK("+f1 -f1 +f2 -f2 ", 0xf1, 0xf2);          /* Hanja, Hangeul */
}

static void test_key_bytes(void)
{
    uint8_t b[4];

    g_assert_cmpuint(qs_scancode_key_bytes(0x1e, b), ==, 1);
    g_assert_cmpuint(b[0], ==, 0x1e);
    g_assert_cmpuint(qs_scancode_key_bytes(0xc8e0, b), ==, 2);
    g_assert_cmpuint(b[0], ==, 0xe0);
    g_assert_cmpuint(b[1], ==, 0xc8);
    g_assert_cmpuint(qs_scancode_key_bytes(0x1de1, b), ==, 2);
    g_assert_cmpuint(b[0], ==, 0xe1);
    g_assert_cmpuint(qs_scancode_key_bytes(0, b), ==, 0);
    g_assert_cmpuint(qs_scancode_key_bytes(0xaabbccdd, b), ==, 4);
    g_assert_cmpuint(b[3], ==, 0xaa);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/channels/scancode/plain", test_plain);
    g_test_add_func("/channels/scancode/extended", test_extended);
    g_test_add_func("/channels/scancode/pause", test_pause);
    g_test_add_func("/channels/scancode/single-byte-keys", test_single_byte_keys);
    g_test_add_func("/channels/scancode/key-bytes", test_key_bytes);
    return g_test_run();
}
