/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Writing the launcher's JSON (state files, --format json, status) with
 * json-glib's builder, one compact line each. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

/* A string member, or null when v is NULL. */
void qs_json_member_string(JsonBuilder *b, const char *key, const char *v);
void qs_json_member_int(JsonBuilder *b, const char *key, gint64 v);
/* An integer member, or null when v is 0 (a port that is not open). */
void qs_json_member_int_or_null(JsonBuilder *b, const char *key, gint64 v);
void qs_json_member_bool(JsonBuilder *b, const char *key, gboolean v);
/* The builder's value as compact JSON and a newline. */
char *qs_json_line(JsonBuilder *b);
/* One JSON string (quotes and escapes): also a valid YAML scalar. */
char *qs_json_quote(const char *s);
