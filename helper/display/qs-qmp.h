/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Development attach: hand qemu one end of a socketpair over QMP. */
#pragma once

#include <glib.h>
#include <stddef.h>

typedef enum {
    QS_QMP_GREETING,    /* {"QMP": {...}} */
    QS_QMP_RETURN,      /* {"return": ...} */
    QS_QMP_ERROR,       /* {"error": {"class": ..., "desc": ...}} */
    QS_QMP_EVENT,       /* {"event": "NAME", ...} */
} QsQmpKind;

typedef struct {
    QsQmpKind kind;
    char *error_class;  /* QS_QMP_ERROR only; may be NULL */
    char *error_desc;   /* QS_QMP_ERROR only; may be NULL */
    char *event;        /* QS_QMP_EVENT only */
} QsQmpMessage;

#define QS_QMP_MAX_LINE (64 * 1024)

/* Parses one QMP message (a JSON object, no trailing newline needed). qemu's
 * text is peer input: anything that is not one well-formed JSON object with
 * exactly one of the keys above fails with a GError. */
gboolean qs_qmp_parse(const char *text, size_t len, QsQmpMessage *msg,
                      GError **error);
void qs_qmp_message_clear(QsQmpMessage *msg);

/* Connects to qemu's QMP socket at `path`, passes one end of a new socketpair
 * with getfd + add_client protocol=@dbus-display, closes QMP and returns the
 * other end (CLOEXEC), on which qemu now expects a p2p D-Bus client. Every
 * read and write is bounded by timeout_ms. Returns -1 with a one-line error. */
int qs_qmp_attach_dbus_p2p(const char *path, int timeout_ms, GError **error);
