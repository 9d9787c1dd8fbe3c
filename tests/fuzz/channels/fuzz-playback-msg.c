/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the playback channel's client-message parser (base messages only). */
#include "fuzz-client-msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_client_msg(qs_playback_msg_parse, FALSE, data, size);
}
