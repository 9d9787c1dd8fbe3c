/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reading facts spice-gtk only logs (link error codes, stream events) from its debug log. */
#include "qs-tc.h"

#include <stdlib.h>

static const char *const link_errors[] = {
    "SPICE_LINK_ERR_OK",
    "SPICE_LINK_ERR_ERROR",
    "SPICE_LINK_ERR_INVALID_MAGIC",
    "SPICE_LINK_ERR_INVALID_DATA",
    "SPICE_LINK_ERR_VERSION_MISMATCH",
    "SPICE_LINK_ERR_NEED_SECURED",
    "SPICE_LINK_ERR_NEED_UNSECURED",
    "SPICE_LINK_ERR_PERMISSION_DENIED",
    "SPICE_LINK_ERR_BAD_CONNECTION_ID",
    "SPICE_LINK_ERR_CHANNEL_NOT_AVAILABLE",
};

const char *qs_tc_link_error_name(int code)
{
    if (code >= 0 && (size_t)code < G_N_ELEMENTS(link_errors))
        return link_errors[code];
    return "SPICE_LINK_ERR_unknown";
}

/* The number right after @key in @msg, or -1. */
static long number_after(const char *msg, const char *key)
{
    const char *p = strstr(msg, key);
    char *end;
    long v;

    if (!p)
        return -1;
    p += strlen(key);
    v = strtol(p, &end, 10);
    return end == p ? -1 : v;
}

/*
 * spice-gtk 0.42 reports the server's link verdict only in its log: the auth
 * reply as debug "link result: reply N", other link replies as the warning
 * "unhandled error N", and NEED_SECURED as debug "switching to tls". Stream
 * events are likewise visible only as debug lines. The texts are matched
 * loosely so a reworded message costs a counter, not a crash.
 */
static gboolean parse_message(QsTc *tc, GLogLevelFlags level, const char *msg)
{
    long v;

    if ((v = number_after(msg, "link result: reply ")) >= 0) {
        tc->link_error = (int)v;
        return TRUE;
    }
    if ((v = number_after(msg, "unhandled error ")) >= 0) {
        tc->link_error = (int)v;
        return TRUE;
    }
    if (strstr(msg, "switching to tls")) {
        tc->link_error = SPICE_LINK_ERR_NEED_SECURED;
        return TRUE;
    }
    if (level & (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL)) {
        /* the first warnings name the cause ("hostname ... verification
         * failed"), the last only the symptom, so keep a bounded list */
        if (!tc->last_warning) {
            tc->last_warning = g_strdup(msg);
        } else if (strlen(tc->last_warning) < 512) {
            g_autofree char *old = tc->last_warning;
            tc->last_warning = g_strdup_printf("%s; %s", old, msg);
        }
        return FALSE;
    }
    if (!(level & G_LOG_LEVEL_DEBUG))
        return FALSE;
    if (strstr(msg, "display_handle_stream_create:")) {
        if (tc->n_stream_create < QS_TC_STREAM_TIMES)
            tc->stream_create_us[tc->n_stream_create] = g_get_monotonic_time();
        tc->n_stream_create++;
    } else if (strstr(msg, "display_handle_stream_destroy:")) {
        if (tc->n_stream_destroy < QS_TC_STREAM_TIMES)
            tc->stream_destroy_us[tc->n_stream_destroy] = g_get_monotonic_time();
        tc->n_stream_destroy++;
    } else if (strstr(msg, "stream data too late by")) {
        tc->n_stream_late++;            /* arrived after its time: a report drop */
    } else if (strstr(msg, "rendering too late by")) {
        tc->n_stream_render_drops++;    /* decoded after its time, not shown */
    } else if (strstr(msg, "video margin: ")) {
        const char *p = strstr(msg, "video margin: ") + strlen("video margin: ");
        int margin = (int)strtol(p, NULL, 10);

        /* "set to 0 since there is no playback" lines repeat the same frame */
        if (strstr(p, "set to 0"))
            return TRUE;
        tc->n_stream_frames++;
        tc->margin_sum += margin;
        tc->margin_min = MIN(tc->margin_min, margin);
        tc->margin_max = MAX(tc->margin_max, margin);
    }
    return TRUE;
}

static GLogWriterOutput writer(GLogLevelFlags level, const GLogField *fields, gsize n_fields,
                               gpointer data)
{
    QsTc *tc = data;
    const char *domain = NULL;
    const char *msg = NULL;

    for (gsize i = 0; i < n_fields; i++) {
        if (g_str_equal(fields[i].key, "GLIB_DOMAIN") && fields[i].length < 0)
            domain = fields[i].value;
        else if (g_str_equal(fields[i].key, "MESSAGE") && fields[i].length < 0)
            msg = fields[i].value;
    }
    /* spice-gtk 0.42 logs as "Spice", older releases as "GSpice" */
    if (domain && msg && (g_str_equal(domain, "Spice") || g_str_equal(domain, "GSpice"))) {
        gboolean known = parse_message(tc, level, msg);

        if ((level & (G_LOG_LEVEL_DEBUG | G_LOG_LEVEL_INFO)) && !tc->verbose)
            return G_LOG_WRITER_HANDLED;
        if (known && !tc->verbose)
            return G_LOG_WRITER_HANDLED;   /* it becomes part of our error line */
    }
    return g_log_writer_default(level, fields, n_fields, data);
}

void qs_tc_log_install(QsTc *tc)
{
    g_log_set_writer_func(writer, tc, NULL);
}

/* Debug logging costs a formatted string per message, so it is on only
 * while connecting and while a command needs its counters. */
void qs_tc_log_capture(QsTc *tc, gboolean on)
{
    tc->log_capture = on;
    spice_util_set_debug(on);
}
