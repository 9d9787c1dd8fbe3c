/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsChannels: the SPICE channel layer's front door: server callbacks, one active session, qemu state in. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "display/qs-cursor.h"
#include "display/qs-input.h"
#include "net/qs-server.h"
#include "screen/qs-screen.h"

typedef struct QsChannels QsChannels;

typedef struct {
    const char *vm_name;        /* MAIN_NAME, or NULL */
    const char *vm_uuid;        /* "xxxxxxxx-xxxx-...", MAIN_UUID, or NULL */
    QsScreen *screen;           /* console 0's pixels; must outlive the QsChannels */
    QsCursor *cursor;           /* its cursor, or NULL */
    QsInput *input;             /* its keyboard and mouse, or NULL (view only) */
} QsChannelsConfig;

/* Main context of the QsServer. Registers change callbacks on the screen,
 * cursor and input, which must not have others. */
QsChannels *qs_channels_new(const QsChannelsConfig *config);
/* Closes the session; connections finish closing from the main loop. */
void qs_channels_free(QsChannels *channels);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsChannels, qs_channels_free)

/* For qs_server_new(cfg, qs_channels_server_callbacks(), channels, ...). */
const QsServerCallbacks *qs_channels_server_callbacks(void);

/* qemu's Mouse.IsAbsolute and Keyboard.Modifiers, for callers without a
 * QsInput (tests); with one, its changed callback does this. */
void qs_channels_set_mouse_absolute(QsChannels *channels, gboolean absolute);
void qs_channels_set_modifiers(QsChannels *channels, uint16_t modifiers);

/* The active session id, 0 if none (tests, stats). */
uint32_t qs_channels_get_session_id(QsChannels *channels);
