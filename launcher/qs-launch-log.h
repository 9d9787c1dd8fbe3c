/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The launcher's own messages: to stderr, or to syslog once detached. */
#pragma once

#include <glib.h>

void qs_log_use_syslog(const char *domain);
/* Also appends timestamped lines to FD (the domain's log file). */
void qs_log_also_to_fd(int fd);
void qs_log_info(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
void qs_log_error(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/* The domain's log file alone: for a line standard output carries. */
void qs_log_file_only(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
