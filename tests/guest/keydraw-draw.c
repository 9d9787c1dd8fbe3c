/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Every pixel keydraw shows: pseudo-font text, key box and activity modes. */
#include "keydraw.h"

#include <string.h>

#define GLYPHS 96
#define COLS (KD_ACT_W / KD_CELL_W)
#define ROWS (KD_ACT_H / KD_CELL_H)

#define BG_SCREEN 0x1d2330u
#define BG_EDITOR 0x101418u
#define FG_EDITOR 0xd8dee9u
#define CURSOR 0xf0c040u

/* Glyph bitmaps: 16 rows of 8 pixels, bit 7 = leftmost. Glyph 0 is blank. */
static uint8_t font[GLYPHS][KD_CELL_H];
static bool font_ready;

static const uint32_t text_colors[] = {
    0xc8ccd4u, 0xc8ccd4u, 0xc8ccd4u, 0x8fbcbbu, 0xebcb8bu, 0xa3be8cu, 0xb48eadu,
    0x81a1c1u,
};

/* splitmix64: deterministic, seedable per frame, fast under TCG. */
static uint64_t rnd_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static unsigned rnd_below(uint64_t *s, unsigned n)
{
    return (unsigned)(rnd_next(s) % n);
}

static void plot_line(uint8_t *g, int x0, int y0, int x1, int y1)
{
    int dx = x1 > x0 ? x1 - x0 : x0 - x1;
    int dy = y1 > y0 ? y0 - y1 : y1 - y0;
    int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int err = dx + dy;

    for (;;) {
        g[y0] |= (uint8_t)(0x80u >> x0);
        if (x0 == x1 && y0 == y1)
            return;
        if (2 * err >= dy) {
            err += dy;
            x0 += sx;
        }
        if (2 * err <= dx) {
            err += dx;
            y0 += sy;
        }
    }
}

/* Strokes between neighbouring anchors of a 3x5 grid look like letters:
 * sharp one-pixel edges, about the density of a real terminal font. */
static void build_font(void)
{
    static const int ax[3] = { 1, 3, 5 };
    static const int ay[5] = { 3, 5, 8, 11, 13 };
    uint64_t s = 0x6b657964726177ull;

    memset(font, 0, sizeof(font));
    for (int gi = 1; gi < GLYPHS; gi++) {
        int strokes = 3 + (int)rnd_below(&s, 4);

        for (int k = 0; k < strokes; k++) {
            int c = (int)rnd_below(&s, 3), r = (int)rnd_below(&s, 5);
            int c2 = c, r2 = r;

            switch (rnd_below(&s, 4)) {
            case 0: c2 = c < 2 ? c + 1 : c - 1; break;
            case 1: r2 = r < 4 ? r + 1 : r - 1; break;
            case 2: r2 = r < 3 ? r + 2 : r - 2; break;
            default:
                c2 = c < 2 ? c + 1 : c - 1;
                r2 = r < 4 ? r + 1 : r - 1;
                break;
            }
            plot_line(font[gi], ax[c], ay[r], ax[c2], ay[r2]);
        }
    }
    font_ready = true;
}

static void draw_glyph(struct kd_fb *fb, int x, int y, unsigned glyph,
                       uint32_t fg, uint32_t bg)
{
    const uint8_t *g = font[glyph % GLYPHS];

    for (int row = 0; row < KD_CELL_H; row++) {
        uint32_t *p = fb->pixels + (size_t)(y + row) * fb->stride + x;
        unsigned bits = g[row];

        for (int col = 0; col < KD_CELL_W; col++)
            p[col] = (bits & (0x80u >> col)) ? fg : bg;
    }
}

static void fill(struct kd_fb *fb, int x, int y, int w, int h, uint32_t color)
{
    for (int row = y; row < y + h; row++) {
        uint32_t *p = fb->pixels + (size_t)row * fb->stride + x;

        for (int col = 0; col < w; col++)
            p[col] = color;
    }
}

/* A screenful of code-like lines: indents, words, a few highlight colours. */
void kd_draw_background(struct kd_fb *fb)
{
    uint64_t s = 0x626b67726e64ull;

    if (!font_ready)
        build_font();
    for (int row = 0; row < KD_H / KD_CELL_H; row++) {
        int len = (int)rnd_below(&s, 8) == 0 ? 0 : 8 + (int)rnd_below(&s, 140);
        int col = 4 * (int)rnd_below(&s, 5);
        uint32_t fg = text_colors[0];

        for (int c = 0; c < KD_W / KD_CELL_W; c++) {
            unsigned glyph = 0;

            if (c >= col && c < col + len) {
                if (rnd_below(&s, 6) == 0) {
                    fg = text_colors[rnd_below(&s, 8)];
                } else {
                    glyph = 1 + rnd_below(&s, GLYPHS - 1);
                }
            }
            draw_glyph(fb, c * KD_CELL_W, row * KD_CELL_H, glyph, fg, BG_SCREEN);
        }
    }
    /* Plain margins make the key box and activity rect easy to locate. */
    fill(fb, KD_KEYBOX_X - 16, KD_KEYBOX_Y - 16, KD_KEYBOX_SIZE + 32,
         KD_KEYBOX_SIZE + 32, BG_SCREEN);
    fill(fb, KD_ACT_X - 8, KD_ACT_Y - 8, KD_ACT_W + 16, KD_ACT_H + 16, 0x3b4252u);
    kd_draw_keybox(fb, 0);
}

/* Grey before the first key, then hues 97 degrees apart so that two
 * consecutive presses never share a colour. */
uint32_t kd_keybox_color(unsigned presses)
{
    unsigned h, f, q, t;

    if (presses == 0)
        return 0x808080u;
    h = (presses * 97u) % 360u;
    f = (h % 60u) * 255u / 60u;
    q = 255u - f;
    t = f;
    switch (h / 60u) {
    case 0: return 0xff0000u | t << 8;
    case 1: return q << 16 | 0x00ff00u;
    case 2: return 0x00ff00u | t;
    case 3: return q << 8 | 0x0000ffu;
    case 4: return t << 16 | 0x0000ffu;
    default: return 0xff0000u | q;
    }
}

void kd_draw_keybox(struct kd_fb *fb, unsigned presses)
{
    fill(fb, KD_KEYBOX_X, KD_KEYBOX_Y, KD_KEYBOX_SIZE, KD_KEYBOX_SIZE,
         kd_keybox_color(presses));
}

static unsigned tri(unsigned v)
{
    v &= 511u;
    return v < 256u ? v : 511u - v;
}

/* xorshift64: no multiplies, the cheapest 64 random bits under TCG. */
static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* busy: smooth gradient drifting every frame, plus 3 noise bits a channel,
 * so lossless encoders cannot cheat yet the picture stays smooth. Two pixels
 * per 64-bit store and per-frame tables keep it cheap under TCG. */
static void draw_busy(struct kd_fb *fb, uint64_t frame)
{
    static uint32_t red[KD_ACT_W], blue[KD_ACT_W + KD_ACT_H];
    uint64_t s = rnd_next(&(uint64_t){ frame }) | 1;
    unsigned t = (unsigned)frame;

    for (int x = 0; x < KD_ACT_W; x++)
        red[x] = tri((unsigned)x + 3u * t) << 16;
    for (int i = 0; i < KD_ACT_W + KD_ACT_H; i++)
        blue[i] = tri((unsigned)i / 2u + 5u * t);

    for (int y = 0; y < KD_ACT_H; y++) {
        uint64_t *p = (uint64_t *)(fb->pixels + (size_t)(KD_ACT_Y + y) * fb->stride +
                                   KD_ACT_X);
        uint32_t g = tri((unsigned)y + 2u * t) << 8;
        const uint32_t *b = blue + y;

        for (int x = 0; x < KD_ACT_W; x += 2) {
            uint64_t c = (uint64_t)(red[x + 1] | g | b[x + 1]) << 32 |
                         (red[x] | g | b[x]);

            p[x / 2] = c ^ (xorshift(&s) & 0x0007070700070707ull);
        }
    }
}

/* heavy: every channel of every pixel random, the worst case for encoders. */
static void draw_heavy(struct kd_fb *fb, uint64_t frame)
{
    uint64_t s = rnd_next(&(uint64_t){ frame }) | 1;

    for (int y = 0; y < KD_ACT_H; y++) {
        uint64_t *p = (uint64_t *)(fb->pixels + (size_t)(KD_ACT_Y + y) * fb->stride +
                                   KD_ACT_X);

        for (int x = 0; x < KD_ACT_W / 2; x++)
            p[x] = xorshift(&s) & 0x00ffffff00ffffffull;
    }
}

/* typing: an editor that receives 10-20 characters a frame, wraps lines and
 * scrolls once the rect is full; damage is the changed cells only. */
static struct {
    uint8_t grid[ROWS][COLS];
    int row, col, line_len;
    uint64_t seed;
} ed;

static void ed_cell(struct kd_fb *fb, int row, int col, bool cursor)
{
    unsigned glyph = ed.grid[row][col];

    draw_glyph(fb, KD_ACT_X + col * KD_CELL_W, KD_ACT_Y + row * KD_CELL_H, glyph,
               cursor ? BG_EDITOR : FG_EDITOR, cursor ? CURSOR : BG_EDITOR);
}

static void ed_new_line(void)
{
    ed.line_len = rnd_below(&ed.seed, 6) == 0 ? 0 : 12 + (int)rnd_below(&ed.seed, COLS - 14);
    ed.col = 4 * (int)rnd_below(&ed.seed, 4);
    if (ed.col > ed.line_len)
        ed.col = 0;
}

static void ed_redraw(struct kd_fb *fb)
{
    for (int r = 0; r < ROWS; r++) {
        for (int c = 0; c < COLS; c++)
            ed_cell(fb, r, c, r == ed.row && c == ed.col);
    }
}

static bool draw_typing(struct kd_fb *fb, struct kd_rect *damage)
{
    int chars = 10 + (int)rnd_below(&ed.seed, 11);
    int r0 = ed.row, r1 = ed.row, c0 = ed.col, c1 = ed.col;
    bool scrolled = false;

    for (int i = 0; i < chars; i++) {
        if (ed.col >= ed.line_len || ed.col >= COLS - 1) {
            ed.row++;
            if (ed.row == ROWS) {
                memmove(ed.grid[0], ed.grid[1], sizeof(ed.grid[0]) * (ROWS - 1));
                memset(ed.grid[ROWS - 1], 0, sizeof(ed.grid[0]));
                ed.row = ROWS - 1;
                scrolled = true;
            }
            ed_new_line();
            c0 = 0;
            c1 = COLS - 1;
        }
        /* Every sixth key is a space, as in prose or code. */
        ed.grid[ed.row][ed.col] = rnd_below(&ed.seed, 6) == 0
            ? 0 : (uint8_t)(1 + rnd_below(&ed.seed, GLYPHS - 1));
        ed.col++;
        if (ed.col > c1)
            c1 = ed.col;
        r1 = ed.row;
    }

    if (scrolled) {
        ed_redraw(fb);
        *damage = (struct kd_rect){ KD_ACT_X, KD_ACT_Y, KD_ACT_W, KD_ACT_H };
        return true;
    }
    if (c1 > COLS - 1)
        c1 = COLS - 1;
    for (int r = r0; r <= r1; r++) {
        for (int c = c0; c <= c1; c++)
            ed_cell(fb, r, c, r == ed.row && c == ed.col);
    }
    damage->x = KD_ACT_X + c0 * KD_CELL_W;
    damage->y = KD_ACT_Y + r0 * KD_CELL_H;
    damage->w = (c1 - c0 + 1) * KD_CELL_W;
    damage->h = (r1 - r0 + 1) * KD_CELL_H;
    return true;
}

void kd_activity_init(struct kd_fb *fb, enum kd_mode mode)
{
    switch (mode) {
    case KD_MODE_IDLE:
    case KD_MODE_BUSY:
        draw_busy(fb, 0);
        break;
    case KD_MODE_HEAVY:
        draw_heavy(fb, 0);
        break;
    case KD_MODE_TYPING:
        memset(&ed, 0, sizeof(ed));
        ed.seed = 0x7479706eull;
        ed_new_line();
        ed_redraw(fb);
        break;
    }
}

bool kd_activity_frame(struct kd_fb *fb, enum kd_mode mode, uint64_t frame,
                       struct kd_rect *damage)
{
    *damage = (struct kd_rect){ KD_ACT_X, KD_ACT_Y, KD_ACT_W, KD_ACT_H };
    switch (mode) {
    case KD_MODE_BUSY:
        draw_busy(fb, frame);
        return true;
    case KD_MODE_HEAVY:
        draw_heavy(fb, frame);
        return true;
    case KD_MODE_TYPING:
        return draw_typing(fb, damage);
    case KD_MODE_IDLE:
    default:
        return false;
    }
}
