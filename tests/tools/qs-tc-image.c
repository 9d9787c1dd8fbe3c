/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The primary surface as an RGB image: copying, PPM/PNG writing and the screenshot command. */
#include "qs-tc.h"

#include <errno.h>
#include <png.h>
#include <stdio.h>

const char *qs_tc_format_name(int format)
{
    switch (format) {
    case SPICE_SURFACE_FMT_1_A: return "1_A";
    case SPICE_SURFACE_FMT_8_A: return "8_A";
    case SPICE_SURFACE_FMT_16_555: return "16_555";
    case SPICE_SURFACE_FMT_16_565: return "16_565";
    case SPICE_SURFACE_FMT_32_xRGB: return "32_xRGB";
    case SPICE_SURFACE_FMT_32_ARGB: return "32_ARGB";
    default: return "unknown";
    }
}

gboolean qs_tc_primary(QsTc *tc, SpiceDisplayPrimary *primary)
{
    if (!tc->display || !tc->primary)
        return FALSE;
    return spice_display_channel_get_primary(tc->display, 0, primary) && primary->data;
}

void qs_tc_image_free(QsTcImage *img)
{
    if (!img)
        return;
    g_free(img->rgb);
    g_free(img);
}

/* spice-gtk's canvas is host-endian pixman memory: 32 bpp words are 0xAARRGGBB. */
static void convert_row(int format, const guint8 *src, guint8 *dst, int width)
{
    for (int x = 0; x < width; x++, dst += 3) {
        guint32 p;
        guint16 q;

        switch (format) {
        case SPICE_SURFACE_FMT_32_xRGB:
        case SPICE_SURFACE_FMT_32_ARGB:
            memcpy(&p, src + 4 * x, 4);
            dst[0] = (p >> 16) & 0xff;
            dst[1] = (p >> 8) & 0xff;
            dst[2] = p & 0xff;
            break;
        case SPICE_SURFACE_FMT_16_565:
            memcpy(&q, src + 2 * x, 2);
            dst[0] = (guint8)(((q >> 11) & 0x1f) * 255 / 31);
            dst[1] = (guint8)(((q >> 5) & 0x3f) * 255 / 63);
            dst[2] = (guint8)((q & 0x1f) * 255 / 31);
            break;
        case SPICE_SURFACE_FMT_16_555:
            memcpy(&q, src + 2 * x, 2);
            dst[0] = (guint8)(((q >> 10) & 0x1f) * 255 / 31);
            dst[1] = (guint8)(((q >> 5) & 0x1f) * 255 / 31);
            dst[2] = (guint8)((q & 0x1f) * 255 / 31);
            break;
        default:
            dst[0] = dst[1] = dst[2] = 0;
            break;
        }
    }
}

QsTcImage *qs_tc_image_from_primary(QsTc *tc, GError **error)
{
    SpiceDisplayPrimary primary;
    g_autoptr(QsTcImage) img = NULL;
    int bpp;

    if (!qs_tc_primary(tc, &primary)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "no primary surface");
        return NULL;
    }
    switch (primary.format) {
    case SPICE_SURFACE_FMT_32_xRGB:
    case SPICE_SURFACE_FMT_32_ARGB:
        bpp = 4;
        break;
    case SPICE_SURFACE_FMT_16_565:
    case SPICE_SURFACE_FMT_16_555:
        bpp = 2;
        break;
    default:
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                    "primary surface format %d (%s) not supported", primary.format,
                    qs_tc_format_name(primary.format));
        return NULL;
    }
    if (primary.width <= 0 || primary.height <= 0 || primary.width > 16384 ||
        primary.height > 16384 || primary.stride < primary.width * bpp) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "implausible primary surface %dx%d stride %d", primary.width,
                    primary.height, primary.stride);
        return NULL;
    }
    img = g_new0(QsTcImage, 1);
    img->width = primary.width;
    img->height = primary.height;
    img->rgb = g_malloc((gsize)primary.width * (gsize)primary.height * 3);
    for (int y = 0; y < primary.height; y++)
        convert_row(primary.format, primary.data + (gsize)y * (gsize)primary.stride,
                    img->rgb + (gsize)y * (gsize)primary.width * 3, primary.width);
    return g_steal_pointer(&img);
}

static gboolean save_ppm(const QsTcImage *img, const char *path, GError **error)
{
    g_autoptr(GString) data = g_string_new(NULL);

    g_string_printf(data, "P6\n%d %d\n255\n", img->width, img->height);
    g_string_append_len(data, (const char *)img->rgb, (gssize)img->width * img->height * 3);
    return g_file_set_contents(path, data->str, (gssize)data->len, error);
}

static gboolean save_png(const QsTcImage *img, const char *path, GError **error)
{
    png_image png;

    /* the simplified API reports errors in the struct instead of longjmp */
    memset(&png, 0, sizeof(png));
    png.version = PNG_IMAGE_VERSION;
    png.width = (png_uint_32)img->width;
    png.height = (png_uint_32)img->height;
    png.format = PNG_FORMAT_RGB;
    if (!png_image_write_to_file(&png, path, 0, img->rgb, img->width * 3, NULL)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "writing %s: %s", path, png.message);
        png_image_free(&png);
        return FALSE;
    }
    return TRUE;
}

gboolean qs_tc_image_save(const QsTcImage *img, const char *path, GError **error)
{
    if (g_str_has_suffix(path, ".png"))
        return save_png(img, path, error);
    return save_ppm(img, path, error);
}

static gboolean settled(QsTc *tc, gpointer data)
{
    gint64 settle_us = *(gint64 *)data;

    return tc->primary && g_get_monotonic_time() - tc->last_invalidate_us >= settle_us;
}

int qs_tc_cmd_screenshot(QsTc *tc, const char *path, int settle_ms)
{
    gint64 settle_us = (gint64)settle_ms * 1000;
    g_autoptr(QsTcImage) img = NULL;
    g_autoptr(GError) err = NULL;

    if (!qs_tc_wait(tc, settled, &settle_us, (gint64)tc->timeout_s * G_USEC_PER_SEC)) {
        if (!tc->fail_status)
            qs_tc_fail(tc, QS_TC_EXIT_TIMEOUT,
                       "timeout: display did not stay unchanged for %d ms within %d s "
                       "(use --settle 0 for a moving picture)", settle_ms, tc->timeout_s);
        return tc->fail_status;
    }
    img = qs_tc_image_from_primary(tc, &err);
    if (!img) {
        qs_tc_fail(tc, QS_TC_EXIT_UNSUPPORTED, "screenshot: %s", err->message);
        return tc->fail_status;
    }
    if (!qs_tc_image_save(img, path, &err)) {
        qs_tc_fail(tc, QS_TC_EXIT_OUTPUT, "screenshot: %s", err->message);
        return tc->fail_status;
    }
    return QS_TC_EXIT_OK;
}
