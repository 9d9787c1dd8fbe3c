/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsDisplayPlan: everything that decides what one client's display channel sends next. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "flow/qs-bwe.h"
#include "flow/qs-plan-types.h"
#include "screen/qs-screen.h"

/*
 * One plan per client display channel. It owns the client's view of the
 * surface, the damage and the scheduler, the link estimates and the pacer,
 * the end-to-end probes, frame timing, which blocks the client holds lossy,
 * and the video streams' areas, codecs and bit rates. It takes facts in
 * (damage, heat snapshots, link facts, PONGs, stream reports, the clock)
 * and hands out one action at a time; it does no I/O, starts no thread and
 * reads no clock. The channel does what an action says (reads pixels,
 * encodes, frames, writes) and reports what came of it.
 *
 * The channel's loop, on every wake-up (damage, writable socket, PONG,
 * finished encode, the timer the last action asked for):
 *
 *     damage = take(watch); if (damage) qs_display_plan_damage(plan, damage, now);
 *     if (qs_display_plan_tick(plan, now)) qs_display_plan_heat(plan, snapshot, now);
 *     for (;;) {
 *         qs_display_plan_next(plan, now, &link, &action);
 *         if (action.kind is IDLE or WAIT) { arm a timer for action.wake_us; break; }
 *         carry it out, report it;
 *     }
 */

QsDisplayPlan *qs_display_plan_new(const QsPlanCaps *caps);
void qs_display_plan_free(QsDisplayPlan *plan);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsDisplayPlan, qs_display_plan_free)

/* The client asked for raw bitmaps (PREFERRED_COMPRESSION OFF), or named
 * MJPEG before H.264 (PREFERRED_VIDEO_CODEC_TYPE). */
void qs_display_plan_prefer_bitmap(QsDisplayPlan *plan, gboolean bitmap);
void qs_display_plan_prefer_mjpeg(QsDisplayPlan *plan, gboolean mjpeg);

/* A take of the screen watch. A new, resized or disabled surface queues
 * the surface actions (streams end first). A block map that does not
 * match the surface is dropped (a take raced a resize; the next one has
 * the new surface). */
void qs_display_plan_damage(QsDisplayPlan *plan, QsScreenDamage *damage, int64_t now_us);
/* Every wake-up, after the damage: ends streams whose area went still;
 * TRUE when stream detection wants a heat snapshot of the screen now. */
gboolean qs_display_plan_tick(QsDisplayPlan *plan, int64_t now_us);
/* The snapshot asked for (taken over): starts and ends streams. */
void qs_display_plan_heat(QsDisplayPlan *plan, QsScreenHeat *heat, int64_t now_us);

void qs_display_plan_next(QsDisplayPlan *plan, int64_t now_us, const QsPlanLink *link,
                          QsPlanAction *action);

/* IMAGE: JPEG rather than lossless for these pixels (the action's rect,
 * 4 bytes a pixel, rows packed). */
gboolean qs_display_plan_image_lossy(const QsPlanAction *action, const uint8_t *pixels);
/* IMAGE sent as `bytes` (lossy: JPEG). Not called when its pixels were
 * gone (a stale surface: the next damage redraws it). */
void qs_display_plan_image_sent(QsDisplayPlan *plan, const QsPlanAction *action,
                                gboolean lossy, uint32_t bytes, int64_t now_us);
/* PROBE: sent as PING `id` after `sent_bytes` of the channel's. */
void qs_display_plan_probe_sent(QsDisplayPlan *plan, int64_t now_us, uint32_t id,
                                uint64_t sent_bytes);
/* A PONG; TRUE when it frees room a waiting plan wants. */
gboolean qs_display_plan_pong(QsDisplayPlan *plan, int64_t now_us, uint32_t id);

/* FRAME or FLUSH came back from the encoder: `est_bytes` as the action
 * said. `done->ok`: returns the frame's multimedia time (`link` as now).
 * Not ok: the stream ends (told) and its codec is not used again; 0. */
uint32_t qs_display_plan_frame_done(QsDisplayPlan *plan, uint32_t stream, uint32_t est_bytes,
                                    const QsPlanFrameDone *done, const QsPlanLink *link,
                                    int64_t now_us);
/* A FRAME came back as a flush (an encoder shared with other viewers had
 * one due first): the stream's newest pixels are still to go. */
void qs_display_plan_stream_dirty(QsDisplayPlan *plan, uint32_t stream);
/* FRAME or FLUSH of a stream that ended meanwhile came back. */
void qs_display_plan_frame_dropped(QsDisplayPlan *plan, uint32_t est_bytes);
/* FRAME: its pixels could not be read (the surface went); the stream ends
 * untold, the surface's own actions follow. */
void qs_display_plan_frame_lost(QsDisplayPlan *plan, uint32_t stream, uint32_t est_bytes,
                                int64_t now_us);

/* STREAM_REPORT. TRUE when it ended a stream (the client cannot decode the
 * codec): ask for the next action. */
gboolean qs_display_plan_stream_report(QsDisplayPlan *plan, uint32_t stream, uint32_t unique_id,
                                       uint32_t end_frame_mm_time, uint32_t num_frames,
                                       uint32_t num_drops, int32_t last_frame_delay,
                                       int64_t now_us);

/* Every stream ends untold (the channel goes). */
void qs_display_plan_end_streams(QsDisplayPlan *plan, int64_t now_us);

/* TCP_NOTSENT_LOWAT the socket should have (one band). */
uint32_t qs_display_plan_notsent_lowat(const QsDisplayPlan *plan);
const QsBwe *qs_display_plan_bwe(const QsDisplayPlan *plan);
/* qs_bwe_pin_bandwidth() of the plan's estimate. */
void qs_display_plan_pin_bandwidth(QsDisplayPlan *plan, uint64_t bytes_per_s);
const QsPlanStats *qs_display_plan_stats(const QsDisplayPlan *plan);
/* The client's surface (tests). */
gboolean qs_display_plan_surface(const QsDisplayPlan *plan, uint32_t *width, uint32_t *height);
