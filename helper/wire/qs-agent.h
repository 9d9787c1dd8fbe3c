/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The SPICE agent (VDAgent) wire format: message reassembly, chunking, clipboard bodies (pure). */
#pragma once

#include <glib.h>
#include <stdint.h>

/*
 * Over the main channel, AGENT_DATA messages carry a byte stream of
 * VDAgentMessage {u32 protocol; u32 type; u64 opaque; u32 size; data[size]},
 * cut into pieces of at most VD_AGENT_MAX_DATA_SIZE (2048) bytes; each piece
 * costs one token of the receiver. spice-protocol.md §2.2, §6.
 */

#define QS_AGENT_HEADER_SIZE 20u
/* Largest AGENT_DATA body accepted from a client (spice-server refuses
 * bigger ones too). */
#define QS_AGENT_CHUNK_MAX 2048u
/* Largest clipboard payload either way; a client offering more is refused
 * and qemu's larger clipboards are not passed on. */
#define QS_AGENT_CLIPBOARD_MAX (16u * 1024 * 1024)
/* Largest CLIPBOARD message: selection header, type, data. */
#define QS_AGENT_CLIPBOARD_MSG_MAX (QS_AGENT_CLIPBOARD_MAX + 8u)
/* Largest other message we keep (capabilities, grabs, requests). */
#define QS_AGENT_SMALL_MSG_MAX (64u * 1024)

#define QS_AGENT_ERROR (qs_agent_error_quark())
GQuark qs_agent_error_quark(void);

typedef enum {
    QS_AGENT_ERROR_MALFORMED,       /* bad protocol field or impossible body */
    QS_AGENT_ERROR_TOO_BIG,         /* over one of the limits above */
} QsAgentError;

/* A complete VDAgentMessage. `data` is NULL (and `kept` FALSE) for types the
 * reader skipped without buffering (see qs_agent_reader_new). */
typedef struct {
    uint32_t type;                  /* VD_AGENT_* */
    uint64_t opaque;
    uint32_t size;
    gboolean kept;
    const uint8_t *data;
} QsAgentMsg;

typedef void (*QsAgentMsgFunc)(const QsAgentMsg *msg, gpointer user_data);

typedef struct QsAgentReader QsAgentReader;

/* `keep(type)` says which types are buffered; the others are read past and
 * delivered with kept = FALSE, whatever their size (up to the message
 * limit), so they cost no memory. */
QsAgentReader *qs_agent_reader_new(gboolean (*keep)(uint32_t type));
/* Every message kept, whatever its type, up to `max_size` bytes of body
 * (the guest agent's passing of whole messages). */
QsAgentReader *qs_agent_reader_new_whole(uint32_t max_size);
void qs_agent_reader_free(QsAgentReader *reader);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsAgentReader, qs_agent_reader_free)

/* Feeds one AGENT_DATA body; calls `func` for each message it completes.
 * On FALSE the stream is broken for good (the caller drops the client). */
gboolean qs_agent_reader_feed(QsAgentReader *reader, const uint8_t *data,
                              size_t size, QsAgentMsgFunc func,
                              gpointer user_data, GError **error);

/* One VDAgentMessage cut into AGENT_DATA bodies of at most
 * QS_AGENT_CHUNK_MAX bytes (the first starts with the header); appended to
 * `out` as GBytes. Returns how many. */
guint qs_agent_build(uint32_t type, const void *data, size_t size,
                     GQueue *out);

/* ---- message bodies ------------------------------------------------------ */

/* Caps as VD_AGENT_CAP_* bit numbers, any count of u32 words. */
#define QS_AGENT_CAP_WORDS 1u

typedef struct {
    gboolean request;               /* the sender wants ours back */
    uint32_t caps[QS_AGENT_CAP_WORDS];   /* words past the first are ignored */
} QsAgentCaps;

gboolean qs_agent_parse_caps(const QsAgentMsg *msg, QsAgentCaps *caps,
                             GError **error);
GBytes *qs_agent_caps_body(gboolean request, const uint32_t *caps, guint n_words);
gboolean qs_agent_has_cap(const uint32_t *caps, guint n_words, guint cap);

/* Clipboard messages: with VD_AGENT_CAP_CLIPBOARD_SELECTION on both sides a
 * 4-byte {u8 selection; u8 reserved[3]} precedes each body, otherwise the
 * selection is CLIPBOARD (0). */
#define QS_AGENT_GRAB_TYPES_MAX 64u

typedef struct {
    uint8_t selection;
    uint32_t n_types;
    uint32_t types[QS_AGENT_GRAB_TYPES_MAX];    /* VD_AGENT_CLIPBOARD_* */
} QsAgentGrab;

typedef struct {
    uint8_t selection;
    uint32_t type;
    const uint8_t *data;            /* into the message, CLIPBOARD only */
    uint32_t size;
} QsAgentClip;

/* GRAB: types beyond QS_AGENT_GRAB_TYPES_MAX are dropped. */
gboolean qs_agent_parse_grab(const QsAgentMsg *msg, gboolean selection,
                             QsAgentGrab *grab, GError **error);
/* REQUEST (type only) and CLIPBOARD (type and data). */
gboolean qs_agent_parse_request(const QsAgentMsg *msg, gboolean selection,
                                QsAgentClip *req, GError **error);
gboolean qs_agent_parse_clipboard(const QsAgentMsg *msg, gboolean selection,
                                  QsAgentClip *clip, GError **error);
gboolean qs_agent_parse_release(const QsAgentMsg *msg, gboolean selection,
                                uint8_t *sel, GError **error);

GBytes *qs_agent_grab_body(gboolean selection, uint8_t sel,
                           const uint32_t *types, guint n_types);
GBytes *qs_agent_request_body(gboolean selection, uint8_t sel, uint32_t type);
GBytes *qs_agent_clipboard_body(gboolean selection, uint8_t sel, uint32_t type,
                                const void *data, size_t size);
GBytes *qs_agent_release_body(gboolean selection, uint8_t sel);

/* ---- monitors config (qs-agent-monitors.c) -------------------------------- */

/* VD_AGENT_MONITORS_CONFIG: {u32 count; u32 flags; count x {u32 height,
 * width, depth; i32 x, y}} then, with FLAG_PHYSICAL_SIZE, count x {u16
 * height_mm, width_mm}. spice-gtk sends at most 16 (its MAX_DISPLAY). */
#define QS_AGENT_MONITORS_MAX 16u
/* The sizes a monitor may ask for; others are refused, not passed on. */
#define QS_AGENT_MONITOR_MIN 16u
#define QS_AGENT_MONITOR_MAX 16384u
/* Bound on the position: far beyond any real desktop, well inside i32. */
#define QS_AGENT_MONITOR_POS_MAX (16 * (int32_t)QS_AGENT_MONITOR_MAX)

typedef struct {
    uint32_t width, height, depth;
    int32_t x, y;                   /* 0, 0 unless the config says USE_POS */
    uint16_t width_mm, height_mm;   /* 0: not given */
} QsAgentMonitor;

typedef struct {
    uint32_t flags;                 /* VD_AGENT_CONFIG_MONITORS_FLAG_*, known ones */
    uint32_t n_monitors;            /* 0 (all disabled)..QS_AGENT_MONITORS_MAX */
    QsAgentMonitor monitors[QS_AGENT_MONITORS_MAX];
} QsAgentMonitors;

/* The message's structure (count, length); not the values. */
gboolean qs_agent_parse_monitors(const QsAgentMsg *msg, QsAgentMonitors *mon,
                                 GError **error);
/* Can this monitor become a mode: enabled, sizes and position in range? */
gboolean qs_agent_monitor_check(const QsAgentMonitor *monitor, GError **error);
/* A MONITORS_CONFIG body as spice-vdagentd takes it: `mon`'s monitors and
 * flags without FLAG_PHYSICAL_SIZE and without the sizes in millimetres.
 * spice-vdagentd (0.22 in Debian 12, and later ones) refuses a config whose
 * size is not exactly the header and the monitors ("invalid message size
 * for VDAgentMonitorsConfig"), and spice-gtk appends the millimetres. */
GBytes *qs_agent_monitors_body_for_guest(const QsAgentMonitors *mon);
/* VD_AGENT_REPLY: {u32 type; u32 error} (VD_AGENT_SUCCESS / VD_AGENT_ERROR). */
GBytes *qs_agent_reply_body(uint32_t type, uint32_t result);
