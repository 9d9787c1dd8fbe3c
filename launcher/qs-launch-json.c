/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The launcher's JSON writing through json-glib, so escaping is the
 * library's and not ours. */

#include "qs-launch-json.h"

void qs_json_member_string(JsonBuilder *b, const char *key, const char *v)
{
    json_builder_set_member_name(b, key);
    if (v) {
        json_builder_add_string_value(b, v);
    } else {
        json_builder_add_null_value(b);
    }
}

void qs_json_member_int(JsonBuilder *b, const char *key, gint64 v)
{
    json_builder_set_member_name(b, key);
    json_builder_add_int_value(b, v);
}

void qs_json_member_int_or_null(JsonBuilder *b, const char *key, gint64 v)
{
    json_builder_set_member_name(b, key);
    if (v) {
        json_builder_add_int_value(b, v);
    } else {
        json_builder_add_null_value(b);
    }
}

void qs_json_member_bool(JsonBuilder *b, const char *key, gboolean v)
{
    json_builder_set_member_name(b, key);
    json_builder_add_boolean_value(b, v);
}

char *qs_json_line(JsonBuilder *b)
{
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    g_autofree char *text = json_to_string(root, FALSE);

    return g_strconcat(text, "\n", NULL);
}

char *qs_json_quote(const char *s)
{
    g_autoptr(JsonNode) node = json_node_new(JSON_NODE_VALUE);

    json_node_set_string(node, s);
    return json_to_string(node, FALSE);
}
