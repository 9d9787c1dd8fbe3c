/* SPDX-License-Identifier: GPL-2.0-or-later */
/* spice-protocol's headers, included without -Wpedantic's complaint about
 * their zero-length arrays. */
#pragma once

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#include <spice/protocol.h>
#include <spice/enums.h>
#pragma GCC diagnostic pop
