/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Test content, H.264 bitstream inspection and external decoding shared by the video tests and the benchmark. */
#include "video-util.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

void vt_draw(VtContent content, uint32_t t, uint8_t *buf, size_t stride,
             uint32_t w, uint32_t h, GRand *rand)
{
    uint32_t bx = (t * 7) % (w > 64 ? w - 64 : 1);
    uint32_t by = (t * 3) % (h > 48 ? h - 48 : 1);

    for (uint32_t y = 0; y < h; y++) {
        uint8_t *row = buf + stride * y;

        for (uint32_t x = 0; x < w; x++) {
            uint8_t *p = row + 4 * x;

            if (content == VT_HEAVY) {
                uint32_t r = g_rand_int(rand);

                memcpy(p, &r, 4);
                continue;
            }
            uint32_t noise = g_rand_int(rand);
            gboolean in_box = x >= bx && x < bx + 64 && y >= by && y < by + 48;

            p[0] = (uint8_t)((in_box ? 230 : (x + t) * 255 / (w + 30)) ^ (noise & 7));
            p[1] = (uint8_t)((in_box ? 40 : y * 255 / h) ^ ((noise >> 3) & 7));
            p[2] = (uint8_t)((in_box ? 60 : ((x + y + 2 * t) & 255)) ^ ((noise >> 6) & 7));
            p[3] = 0;
        }
    }
}

guint vt_nals(const uint8_t *data, size_t len, VtNal *nals, guint max)
{
    guint n = 0;
    size_t i = 0;
    size_t start = SIZE_MAX;

    while (i + 3 <= len) {
        if (data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1) {
            if (start != SIZE_MAX && n < max) {
                size_t end = i;

                while (end > start && data[end - 1] == 0) {
                    end--;      /* the 4-byte start code's leading zero */
                }
                nals[n] = (VtNal){ data + start, end - start, data[start] & 0x1f };
                n++;
            }
            i += 3;
            start = i;
            continue;
        }
        i++;
    }
    if (start != SIZE_MAX && start < len && n < max) {
        nals[n] = (VtNal){ data + start, len - start, data[start] & 0x1f };
        n++;
    }
    return n;
}

typedef struct {
    const uint8_t *p;
    size_t len;
    size_t bit;
} Bits;

static int read_bit(Bits *b)
{
    int v;

    if (b->bit >= b->len * 8) {
        return -1;
    }
    v = (b->p[b->bit / 8] >> (7 - b->bit % 8)) & 1;
    b->bit++;
    return v;
}

static int read_ue(Bits *b)
{
    int zeros = 0;
    int v = 0;
    int bit;

    while ((bit = read_bit(b)) == 0) {
        if (++zeros > 24) {
            return -1;
        }
    }
    if (bit < 0) {
        return -1;
    }
    for (int i = 0; i < zeros; i++) {
        bit = read_bit(b);
        if (bit < 0) {
            return -1;
        }
        v = (v << 1) | bit;
    }
    return (1 << zeros) - 1 + v;
}

static int read_bits(Bits *b, int n)
{
    int v = 0;

    for (int i = 0; i < n; i++) {
        int bit = read_bit(b);

        if (bit < 0) {
            return -1;
        }
        v = (v << 1) | bit;
    }
    return v;
}

gboolean vt_parse_sps(const VtNal *nal, VtSps *sps)
{
    g_autofree uint8_t *rbsp = g_malloc(nal->len);
    size_t n = 0;
    Bits b;
    int crop[4] = { 0, 0, 0, 0 };
    int w_mbs, h_maps, frame_mbs_only;

    /* Drop emulation prevention bytes (00 00 03). */
    for (size_t i = 1; i < nal->len; i++) {
        if (i >= 3 && nal->p[i] == 3 && nal->p[i - 1] == 0 && nal->p[i - 2] == 0) {
            continue;
        }
        rbsp[n++] = nal->p[i];
    }
    b = (Bits){ rbsp, n, 0 };
    memset(sps, 0, sizeof(*sps));
    sps->profile_idc = read_bits(&b, 8);
    sps->constraints = read_bits(&b, 8);
    sps->level_idc = read_bits(&b, 8);
    read_ue(&b);                                /* seq_parameter_set_id */
    if (sps->profile_idc >= 100) {
        return FALSE;                           /* chroma_format_idc etc. */
    }
    read_ue(&b);                                /* log2_max_frame_num_minus4 */
    sps->poc_type = read_ue(&b);
    if (sps->poc_type == 0) {
        read_ue(&b);
    } else if (sps->poc_type == 1) {
        return FALSE;
    }
    sps->max_num_ref_frames = read_ue(&b);
    read_bit(&b);                               /* gaps_in_frame_num_allowed */
    w_mbs = read_ue(&b) + 1;
    h_maps = read_ue(&b) + 1;
    frame_mbs_only = read_bit(&b);
    if (!frame_mbs_only) {
        read_bit(&b);
    }
    read_bit(&b);                               /* direct_8x8_inference */
    if (read_bit(&b) == 1) {
        for (int i = 0; i < 4; i++) {
            crop[i] = read_ue(&b);
        }
    }
    sps->width = w_mbs * 16 - 2 * (crop[0] + crop[1]);
    sps->height = h_maps * 16 * (2 - frame_mbs_only) - 2 * (2 - frame_mbs_only) * (crop[2] + crop[3]);
    sps->vui = read_bit(&b);
    if (sps->vui != 1) {
        return sps->vui == 0;
    }
    if (read_bit(&b) == 1 && read_bits(&b, 8) == 255) {   /* aspect ratio */
        read_bits(&b, 16);
        read_bits(&b, 16);
    }
    if (read_bit(&b) == 1) {                    /* overscan */
        read_bit(&b);
    }
    if (read_bit(&b) == 1) {                    /* video signal type */
        read_bits(&b, 3);
        sps->video_full_range = read_bit(&b);
        if (read_bit(&b) == 1) {
            sps->colour_primaries = read_bits(&b, 8);
            sps->transfer = read_bits(&b, 8);
            sps->matrix = read_bits(&b, 8);
        }
    }
    if (read_bit(&b) == 1) {                    /* chroma location */
        read_ue(&b);
        read_ue(&b);
    }
    if (read_bit(&b) == 1) {                    /* timing */
        read_bits(&b, 16);
        read_bits(&b, 16);
        read_bits(&b, 16);
        read_bits(&b, 16);
        read_bit(&b);
    }
    if (read_bit(&b) != 0 || read_bit(&b) != 0) {
        return FALSE;                           /* NAL or VCL HRD */
    }
    read_bit(&b);                               /* pic_struct_present */
    sps->bitstream_restriction = read_bit(&b);
    if (sps->bitstream_restriction == 1) {
        read_bit(&b);
        read_ue(&b);
        read_ue(&b);
        read_ue(&b);
        read_ue(&b);
        sps->max_num_reorder_frames = read_ue(&b);
        sps->max_dec_frame_buffering = read_ue(&b);
    }
    return sps->max_dec_frame_buffering >= 0 && b.bit <= b.len * 8;
}

int vt_slice_type(const VtNal *nal)
{
    /* The first bytes of a slice header hold no emulation prevention in
     * practice (first_mb_in_slice 0 and slice_type are tiny). */
    Bits b = { nal->p + 1, nal->len - 1, 0 };

    if (nal->len < 2 || read_ue(&b) < 0) {
        return -1;
    }
    return read_ue(&b);
}

double vt_psnr(const uint8_t *a, const uint8_t *b, size_t n)
{
    double se = 0;

    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - (double)b[i];

        se += d * d;
    }
    return se == 0 ? 99.0 : 10 * log10(255.0 * 255.0 / (se / (double)n));
}

gboolean vt_gst_has(const char *element)
{
    const char *argv[] = { "gst-inspect-1.0", "--exists", element, NULL };
    g_autofree char *inspect = g_find_program_in_path("gst-inspect-1.0");
    g_autofree char *launch = g_find_program_in_path("gst-launch-1.0");
    int status = -1;

    if (!inspect || !launch) {
        return FALSE;
    }
    if (!g_spawn_sync(NULL, (char **)argv, NULL,
                      G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL |
                      G_SPAWN_STDERR_TO_DEV_NULL,
                      NULL, NULL, NULL, NULL, &status, NULL)) {
        return FALSE;
    }
    return g_spawn_check_wait_status(status, NULL);
}

GBytes *vt_gst_decode_h264(const char *path, const char *decoder)
{
    g_autofree char *out_path = g_strconcat(path, ".yuv", NULL);
    g_autofree char *src = g_strdup_printf("location=%s", path);
    g_autofree char *dst = g_strdup_printf("location=%s", out_path);
    g_autofree char *err = NULL;
    g_autoptr(GError) error = NULL;
    const char *argv[] = {
        "timeout", "120", "gst-launch-1.0", "-q", "filesrc", src, "!",
        "h264parse", "!", decoder, "!", "videoconvert", "!",
        "video/x-raw,format=I420", "!", "filesink", dst, NULL,
    };
    char *contents = NULL;
    gsize len = 0;
    int status = -1;

    if (!g_spawn_sync(NULL, (char **)argv, NULL,
                      G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                      NULL, NULL, &err, &status, &error) ||
        !g_spawn_check_wait_status(status, NULL)) {
        g_test_message("gst-launch %s failed: %s", decoder,
                       error ? error->message : err);
        return NULL;
    }
    if (!g_file_get_contents(out_path, &contents, &len, NULL)) {
        return NULL;
    }
    g_unlink(out_path);
    return g_bytes_new_take(contents, len);
}
