/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Pieces shared by the encoders of helper/encode only. */
#pragma once

#include <glib.h>
#include <stdint.h>

/* SpiceImageDescriptor: u64 id; u8 type; u8 flags; u32 width; u32 height. */
void qs_enc_image_descriptor(GByteArray *out, uint64_t id, uint8_t type,
                             uint32_t width, uint32_t height);
