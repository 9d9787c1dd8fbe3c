/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The launcher's libvirt calls: domain lookup, live XML, OpenGraphicsFD and
 * the console metadata. */
#pragma once

#include <glib.h>
#include <libvirt/libvirt.h>
#include "qs-launch-domain.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC(virConnect, virConnectClose)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(virDomain, virDomainFree)

virConnectPtr qs_virt_connect(const char *uri, GError **error);
/* By name, UUID or id. */
virDomainPtr qs_virt_lookup(virConnectPtr conn, const char *name,
                            GError **error);
char *qs_virt_live_xml(virDomainPtr dom, GError **error);
/* A new p2p D-Bus socket to qemu's display (CLOEXEC). */
int qs_virt_open_graphics(virDomainPtr dom, guint idx, GError **error);
/* meta NULL: only the opt-in (if any) is left in the element. */
gboolean qs_virt_set_console_metadata(virDomainPtr dom,
                                      const QsConsoleMeta *meta,
                                      GError **error);
