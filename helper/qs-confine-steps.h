/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The confinement steps qs_confine_prepare() and qs_confine_apply() take, each on its own. */
#pragma once

#include <sys/types.h>
#include <glib.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define QS_CONFINE_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define QS_CONFINE_SANITIZER 1
#endif
#endif

/* Sets `error` from errno, naming `what`; FALSE. */
gboolean qs_confine_errno_error(GError **error, const char *what);
/* Empties the capability bounding set (needs CAP_SETPCAP). */
void qs_confine_drop_bounding_set(void);
/* Lazy file opens of the libraries, done now while files are reachable. */
void qs_confine_warm_up(void);
/* RLIMIT_NOFILE, no core dumps, RLIMIT_AS (not under a sanitizer). */
gboolean qs_confine_apply_rlimits(int max_files, int max_as_mib, GError **error);
/* chroot into an empty directory removed after entering it. */
gboolean qs_confine_apply_fs(GError **error);
/* Every thread's uid and gid, for good; no groups. */
gboolean qs_confine_apply_user(uid_t uid, gid_t gid, GError **error);
gboolean qs_confine_apply_caps(GError **error);
