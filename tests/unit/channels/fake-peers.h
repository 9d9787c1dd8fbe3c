/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fakes of net's QsConn and display's QsCursor/QsInput for the channel state machine tests. */
#pragma once

#include "channels/qs-display-clock.h"
#include "display/qs-cursor.h"
#include "display/qs-input.h"
#include "net/qs-conn.h"

typedef struct {
    guint16 type;
    GBytes *payload;            /* never NULL here: empty bodies are 0 bytes */
} FakeMsg;

/* A linked connection of `channel_type` with `connection_id` and client
 * channel caps `caps` (one word). */
QsConn *fake_conn_new(guint8 channel_type, guint8 channel_id,
                      guint32 connection_id, guint32 caps);
void fake_conn_set_session_id(QsConn *conn, guint32 session_id);
/* As if linked with the view-only ticket; before the link callbacks. */
void fake_conn_set_view_only(QsConn *conn);
/* A client message, through the handlers the channel layer installed. */
void fake_conn_deliver(QsConn *conn, guint16 type, const void *data, gsize size);
/* A PING is answered with its PONG from an idle (the next loop iteration)
 * unless this is set. */
void fake_conn_set_ignore_pings(QsConn *conn, gboolean ignore);
/* The channel the connection's messages go to (its handlers' data), or
 * NULL once closed. */
gpointer fake_conn_channel(QsConn *conn);
/* Messages sent so far (FakeMsg), and clearing them. */
GArray *fake_conn_sent(QsConn *conn);
void fake_conn_clear(QsConn *conn);
/* Pretend the kernel holds back `bytes` / took everything (then "writable"). */
void fake_conn_set_queued(QsConn *conn, gsize bytes);
void fake_conn_drain(QsConn *conn);
const char *fake_conn_close_reason(QsConn *conn);   /* NULL if open */
/* The client is gone: closed, and the closed handler runs now rather than
 * from net's idle on a later iteration, so that a test can put it before
 * work already pending in the main loop (a worker's result). */
void fake_conn_vanish(QsConn *conn, const char *reason);
/* Messages the channels tried to send once the connection was closed
 * (refused, as net refuses them, and not in fake_conn_sent). */
guint fake_conn_sent_after_close(QsConn *conn);
/* A simulated link (bottleneck rate, base RTT) behind qs_conn_get_link_facts;
 * without one the facts are unknown. */
void fake_conn_set_link(QsConn *conn, uint64_t bytes_per_s, uint32_t rtt_us);
/* What is queued at the bottleneck now, in time to drain it. */
int64_t fake_conn_link_delay_us(QsConn *conn);
/* The backlog message `i` (of fake_conn_sent) met when it was sent. */
int64_t fake_conn_msg_delay_us(QsConn *conn, guint i);
gboolean fake_conn_has_handlers(QsConn *conn);
/* Whether the channel layer lets the client's messages be read. */
gboolean fake_conn_is_reading(QsConn *conn);
/* The incoming bound the channel set, 0 if none. */
guint32 fake_conn_max_message(QsConn *conn);

QsCursor *fake_cursor_new(void);
void fake_cursor_define(QsCursor *cursor, int32_t w, int32_t h, int32_t hot_x,
                        int32_t hot_y, uint8_t fill);
void fake_cursor_move(QsCursor *cursor, int32_t x, int32_t y, gboolean visible);
void fake_cursor_free(QsCursor *cursor);

QsInput *fake_input_new(gboolean absolute, uint32_t modifiers);
/* What the channels asked qemu to do, e.g. "key +1e;buttons 1;". */
const char *fake_input_log(QsInput *input);
void fake_input_clear(QsInput *input);
void fake_input_set_absolute(QsInput *input, gboolean absolute);
void fake_input_set_modifiers(QsInput *input, uint32_t modifiers);
void fake_input_free(QsInput *input);
/* Called after each logged input event (like a guest reacting to input). */
void fake_input_set_hook(QsInput *input, void (*hook)(QsInput *, gpointer), gpointer data);

/* Runs the default main context until nothing is pending. */
void fake_loop_run_pending(void);

/* A display clock the test moves (fake-clock.c); give &clock->clock to
 * QsChannelsConfig.display_clock and to fake_conn_use_clock(). */
typedef struct {
    QsDisplayClock clock;
    int64_t now_us;
} FakeClock;
void fake_clock_init(FakeClock *clock);
/* The simulated links and PONG delays run on `clock` (NULL: the real one). */
void fake_conn_use_clock(const QsDisplayClock *clock);
