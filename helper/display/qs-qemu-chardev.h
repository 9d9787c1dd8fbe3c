/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsQemuChardev: one of qemu's `-chardev dbus` chardevs on its D-Bus
 * display (org.qemu.Display1.Chardev at /org/qemu/Display1/Chardev_ID). */
#pragma once

#include <gio/gio.h>

/*
 * qemu's D-Bus chardev is a socket chardev without a listener: Register(h)
 * hands it one end of a socket pair as its connection (refused while it
 * has one), and it is disconnected again when we close our end. So each
 * registration is one chardev connection, as qemu connecting to a
 * listening socket is: usb-redir says hello on each, the guest sees the
 * host side of a virtio port open and close with it.
 *
 * FEOpened is qemu's front end's open state: for a virtio-serial port the
 * guest's (a program has the port open), for usb-redir and
 * ccid-card-passthru always true once the device is realized.
 */
typedef struct QsQemuChardev QsQemuChardev;

/* From an object of GetManagedObjects: `ifaces` its a{sa{sv}}; NULL when
 * it has no org.qemu.Display1.Chardev with a Name. Nothing is called. */
QsQemuChardev *qs_qemu_chardev_from_object(GDBusConnection *conn, const char *dest,
                                           const char *path, GVariant *ifaces);
void qs_qemu_chardev_free(QsQemuChardev *chardev);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsQemuChardev, qs_qemu_chardev_free)

const char *qs_qemu_chardev_get_name(QsQemuChardev *chardev);
const char *qs_qemu_chardev_get_path(QsQemuChardev *chardev);
/* The last FEOpened seen (at discovery, then from PropertiesChanged once
 * watched). */
gboolean qs_qemu_chardev_get_fe_opened(QsQemuChardev *chardev);

/* Main context: qemu's answer to a registration. `fd` is our end, a
 * connected stream socket (CLOEXEC), the callee's; or -1 and `error`, with
 * `gone` when qemu no longer has the chardev (it was removed). */
typedef void (*QsQemuChardevRegistered)(int fd, const GError *error, gboolean gone,
                                        gpointer data);

/* Makes a socket pair and passes one end with Register(h), asynchronously
 * (qemu is never waited for). Not called back after `cancellable` is
 * cancelled (our end is then closed). A socket pair that cannot be made
 * is reported through `done` from an idle. */
void qs_qemu_chardev_register(QsQemuChardev *chardev, GCancellable *cancellable,
                              QsQemuChardevRegistered done, gpointer data);

/* Main context: FEOpened changed (PropertiesChanged); NULL stops. */
typedef void (*QsQemuChardevFeOpenedFunc)(QsQemuChardev *chardev, gboolean opened,
                                          gpointer data);
void qs_qemu_chardev_watch_fe_opened(QsQemuChardev *chardev, QsQemuChardevFeOpenedFunc func,
                                     gpointer data);
