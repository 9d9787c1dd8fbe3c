/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Resolving a user name without loading NSS modules into the helper. */
#pragma once

#include <sys/types.h>
#include <glib.h>

G_BEGIN_DECLS

typedef struct {
    uid_t uid;
    gid_t gid;
    char name[64];
} QsUserEntry;

/*
 * Looks `name` up (getpwnam) in a short-lived child process, so whatever
 * NSS modules the host's nsswitch.conf names (nss_systemd, sssd, ldap...)
 * map into the child, not into the long-lived helper: they would cost
 * every helper their resident pages and widen what the confined helper
 * has mapped. Call only while the process has one thread. Returns FALSE
 * with no error set when there is no such user, FALSE with `error` set
 * when the lookup itself failed.
 */
gboolean qs_user_lookup(const char *name, QsUserEntry *entry, GError **error);

G_END_DECLS
