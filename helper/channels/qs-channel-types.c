/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The channel types a session may hold: its owner hands this table to its sessions, which know no channel type. */
#include "channels/qs-channel-types.h"
#include "channels/qs-cursor-channel.h"
#include "channels/qs-display-channel.h"
#include "channels/qs-inputs-channel.h"
#include "channels/qs-main-channel.h"
#include "channels/qs-playback-channel.h"
#include "channels/qs-record-channel.h"
#include "channels/qs-vmc-channel.h"

#include <spice/enums.h>

const QsChannelNewFunc qs_channel_types[SPICE_END_CHANNEL] = {
    [SPICE_CHANNEL_MAIN] = qs_main_channel_new,
    [SPICE_CHANNEL_DISPLAY] = qs_display_channel_new,
    [SPICE_CHANNEL_INPUTS] = qs_inputs_channel_new,
    [SPICE_CHANNEL_CURSOR] = qs_cursor_channel_new,
    [SPICE_CHANNEL_PLAYBACK] = qs_playback_channel_new,
    [SPICE_CHANNEL_RECORD] = qs_record_channel_new,
    [SPICE_CHANNEL_SMARTCARD] = qs_vmc_channel_new,
    [SPICE_CHANNEL_USBREDIR] = qs_vmc_channel_new,
    [SPICE_CHANNEL_PORT] = qs_vmc_channel_new,
    [SPICE_CHANNEL_WEBDAV] = qs_vmc_channel_new,
};
