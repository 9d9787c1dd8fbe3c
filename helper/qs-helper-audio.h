/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The helper's sound: qemu's D-Bus audio output and capture, wired to the
 * playback and record channels, and their registrations with qemu. */
#pragma once

#include <gio/gio.h>

#include "channels/qs-channels.h"
#include "display/qs-display.h"

typedef struct QsHelperAudio QsHelperAudio;

QsHelperAudio *qs_helper_audio_new(QsChannels *channels, GDBusConnection *conn,
                                   const char *dest);
/* Registers both listeners with qemu, as `audio` (qs_display_get_audio)
 * allows. Until qemu answers, clients' channel lists wait
 * (qs_channels_audio_settling). Main loop; once. */
void qs_helper_audio_start(QsHelperAudio *audio, QsDisplayAudio can);
void qs_helper_audio_free(QsHelperAudio *audio);
