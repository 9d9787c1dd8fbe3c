/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The constructor of each channel type we serve, by SPICE channel type, for the sessions' context. */
#pragma once

#include "channels/qs-channel-context.h"

/* Indexed by SPICE_CHANNEL_*, below SPICE_END_CHANNEL; NULL: not served. */
extern const QsChannelNewFunc qs_channel_types[];
