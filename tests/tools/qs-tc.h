/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared state and helpers of qs-test-client, the spice-client-glib test client. */
#pragma once

#include <spice-client.h>

/* Exit statuses: tests tell the failure kinds apart by these. */
enum {
    QS_TC_EXIT_OK = 0,
    QS_TC_EXIT_INTERNAL = 1,     /* our own failure (e.g. out of memory) */
    QS_TC_EXIT_USAGE = 2,
    QS_TC_EXIT_CONNECT = 3,      /* TCP/socket connect failed */
    QS_TC_EXIT_LINK = 4,         /* SPICE link refused (NEED_SECURED, bad id, ...) */
    QS_TC_EXIT_AUTH = 5,         /* ticket rejected (wrong/expired password) */
    QS_TC_EXIT_TLS = 6,
    QS_TC_EXIT_IO = 7,           /* disconnected / read error after link */
    QS_TC_EXIT_TIMEOUT = 8,      /* a bounded wait ran out */
    QS_TC_EXIT_EXPECT = 9,       /* an expectation (--expect-size, ...) failed */
    QS_TC_EXIT_OUTPUT = 10,      /* could not write an output file */
    QS_TC_EXIT_UNSUPPORTED = 11, /* server cannot do what was asked (e.g. client mouse) */
};

typedef struct QsTc QsTc;

/* Called for every display-invalidate of the primary surface of display 0. */
typedef void (*QsTcInvalidateFn)(QsTc *tc, int x, int y, int w, int h, gpointer data);

typedef struct {
    SpiceChannel *channel;
    int type;
    int id;
    int event;                 /* last SpiceChannelEvent, 0 if none yet */
    gulong base_read_bytes;    /* total-read-bytes at the start of a watch */
} QsTcChannel;

struct QsTc {
    /* options */
    int timeout_s;
    gboolean verbose;
    gboolean want_audio;
    int display_id;            /* the display channel "display 0" below stands for */
    GArray *video_codecs;      /* SPICE_VIDEO_CODEC_TYPE_*, the client's order; or NULL */

    /* --add-client: every channel's socket comes through AddClient */
    GDBusConnection *control;
    gboolean control_bus;      /* on a message bus: call org.qemuspice.Helper1 */
    gboolean skipauth;
    guint n_added;

    SpiceSession *session;
    SpiceMainChannel *main;
    SpiceChannel *display;     /* display channel display_id (default 0) */
    SpiceInputsChannel *inputs;
    GPtrArray *channels;       /* QsTcChannel*, every channel we connected */
    guint live_channels;       /* channel-new minus channel-destroy */
    gboolean closing;          /* we disconnect: channel events are no failures */

    /* first fatal failure; once set every wait returns */
    int fail_status;
    char *fail_msg;

    /* display 0 state */
    gboolean primary;
    int primary_width;
    int primary_height;
    int primary_format;
    gint64 last_invalidate_us;
    guint64 n_invalidates;
    guint64 invalidate_pixels;
    gboolean mark;
    gboolean monitors_config;  /* a MONITORS_CONFIG from the server was applied */
    gboolean mouse_mode_seen;

    QsTcInvalidateFn on_invalidate;
    gpointer on_invalidate_data;

    /* counters taken from spice-gtk's debug log (see qs-tc-log.c) */
    gboolean log_capture;
    int link_error;            /* last SPICE_LINK_ERR_* seen, -1 if none */
    char *last_warning;        /* warnings spice-gtk logged, for error lines */
    gboolean have_tls_port;
    guint64 n_stream_create;
    guint64 n_stream_destroy;
    /* when the first creations and destructions arrived (monotonic us), so
     * a test can time a stream's start against what it did to the guest */
#define QS_TC_STREAM_TIMES 64
    gint64 stream_create_us[QS_TC_STREAM_TIMES];
    gint64 stream_destroy_us[QS_TC_STREAM_TIMES];
    guint64 n_stream_frames;
    guint64 n_stream_late;
    guint64 n_stream_render_drops;
    gint64 margin_sum;
    int margin_min;
    int margin_max;
};

/* qs-tc-session.c */
void qs_tc_init(QsTc *tc);
void qs_tc_clear(QsTc *tc);
gboolean qs_tc_connect(QsTc *tc, const char *host, const char *port, const char *tls_port,
                       const char *ca_file, const char *host_subject, const char *password,
                       const char *secure_channels);
void qs_tc_fail(QsTc *tc, int status, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
typedef gboolean (*QsTcCond)(QsTc *tc, gpointer data);
gboolean qs_tc_wait(QsTc *tc, QsTcCond cond, gpointer data, gint64 timeout_us);
gboolean qs_tc_wait_ready(QsTc *tc);
gboolean qs_tc_flush(QsTc *tc, SpiceChannel *channel);
const char *qs_tc_channel_name(int type);
const char *qs_tc_mouse_mode_name(int mode);
int qs_tc_mouse_mode(QsTc *tc);

/* qs-tc-add-client.c: the connection to the helper's control interface at
 * D-Bus `address` (a message bus if `bus`), and the open-fd handler that
 * hands each channel's socket in (the session is then opened with
 * spice_session_open_fd). */
gboolean qs_tc_add_client_open(QsTc *tc, const char *address, gboolean bus, gboolean skipauth,
                               GError **error);
void qs_tc_add_client_watch(QsTc *tc, SpiceChannel *channel);

/* qs-tc-relay.c: a relay on 127.0.0.1 to host:port that clears
 * `clear_display_caps` from the display channels' link; returns its port. */
char *qs_tc_relay_start(const char *host, const char *port, guint32 clear_display_caps,
                        GError **error);

/* qs-tc-watch.c: the channel's total-read-bytes since it connected */
gulong qs_tc_read_bytes(SpiceChannel *channel);

/* qs-tc-log.c */
void qs_tc_log_install(QsTc *tc);
void qs_tc_log_capture(QsTc *tc, gboolean on);
const char *qs_tc_link_error_name(int code);

/* qs-tc-image.c */
typedef struct {
    int width;
    int height;
    guint8 *rgb;               /* width*height*3, tightly packed */
} QsTcImage;

gboolean qs_tc_primary(QsTc *tc, SpiceDisplayPrimary *primary);
QsTcImage *qs_tc_image_from_primary(QsTc *tc, GError **error);
void qs_tc_image_free(QsTcImage *img);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsTcImage, qs_tc_image_free)
gboolean qs_tc_image_save(const QsTcImage *img, const char *path, GError **error);
int qs_tc_cmd_screenshot(QsTc *tc, const char *path, int settle_ms);
const char *qs_tc_format_name(int format);

/* qs-tc-info.c */
int qs_tc_cmd_info(QsTc *tc);

/* qs-tc-input.c */
int qs_tc_cmd_key(QsTc *tc, const guint *codes, guint n);
int qs_tc_cmd_click(QsTc *tc, int x, int y, int button);

/* qs-tc-keylat.c */
typedef struct {
    int x, y, w, h;
    int count;
    int interval_ms;
    int sample_timeout_ms;
    guint scancode;
} QsTcKeylatOpts;
int qs_tc_cmd_keylat(QsTc *tc, const QsTcKeylatOpts *opts);

/* qs-tc-watch.c */
/* rect: X,Y,W,H whose activity onsets are reported, or NULL */
int qs_tc_cmd_watch(QsTc *tc, double seconds, const int *rect);
