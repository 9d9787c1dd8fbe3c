/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Launcher logging: a detached launcher has no terminal, so it goes to syslog
 * with the domain in its ident; in the foreground messages go to stderr. */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include "qs-launch-log.h"

static gboolean use_syslog;
static char *ident;
static int file_fd = -1;

void qs_log_also_to_fd(int fd)
{
    file_fd = fd;
}

void qs_log_use_syslog(const char *domain)
{
    g_free(ident);
    ident = g_strdup_printf("qemu-spice-launcher[%s]", domain);
    openlog(ident, LOG_PID, LOG_DAEMON);
    use_syslog = TRUE;
}

/* file_only: the log file alone, for a line printed elsewhere already. */
static void emit(int prio, gboolean file_only, const char *fmt, va_list ap)
{
    g_autofree char *msg = g_strdup_vprintf(fmt, ap);

    if (file_fd >= 0) {
        g_autoptr(GDateTime) now = g_date_time_new_now_utc();
        g_autofree char *ts = g_date_time_format_iso8601(now);
        g_autofree char *line = g_strdup_printf("%s launcher: %s\n", ts, msg);

        /* the log is best effort: a full disk must not stop the launcher */
        if (write(file_fd, line, strlen(line)) < 0) {
            file_fd = -1;
        }
    }
    if (file_only) {
        return;
    }
    if (use_syslog) {
        syslog(prio, "%s", msg);
    } else {
        fprintf(stderr, "qemu-spice-launcher: %s\n", msg);
    }
}

void qs_log_info(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    emit(LOG_INFO, FALSE, fmt, ap);
    va_end(ap);
}

void qs_log_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    emit(LOG_ERR, FALSE, fmt, ap);
    va_end(ap);
}

void qs_log_file_only(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    emit(LOG_INFO, TRUE, fmt, ap);
    va_end(ap);
}
