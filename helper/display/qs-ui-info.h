/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Asks qemu for a console mode (org.qemu.Display1.Console.SetUIInfo): one call at a time, the newest request wins. */
#pragma once

#include <gio/gio.h>
#include <stdint.h>

/*
 * qemu passes the UI info to the console's device (virtio-gpu: a display
 * event, the guest sees a new preferred mode); the guest picks the mode
 * itself and a new scanout follows. Devices without UI info (std-vga,
 * bochs, cirrus) make qemu answer org.qemu.Display1.Error.Unsupported:
 * logged once, and later requests are refused without a call. Nothing here
 * blocks.
 */
#define QS_UI_INFO_CALL_TIMEOUT_MS 5000

typedef struct QsUiInfo QsUiInfo;

typedef struct {
    uint16_t width_mm, height_mm;   /* 0: unknown */
    int32_t x, y;
    uint32_t width, height;
} QsUiInfoRequest;

/* Main context: qemu took (TRUE) or refused the latest request; one call
 * answers every request it superseded. */
typedef void (*QsUiInfoDoneFunc)(gboolean applied, gpointer user_data);

/* `dest`: qemu's bus name, NULL on a peer-to-peer connection. */
QsUiInfo *qs_ui_info_new(GDBusConnection *conn, const char *dest,
                         uint32_t console_id, QsUiInfoDoneFunc done,
                         gpointer user_data);
/* Cancels a call in flight; `done` is not called any more. */
void qs_ui_info_free(QsUiInfo *ui);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsUiInfo, qs_ui_info_free)

void qs_ui_info_request(QsUiInfo *ui, const QsUiInfoRequest *req);
/* FALSE once qemu said the console's device has no UI info. */
gboolean qs_ui_info_is_supported(QsUiInfo *ui);
