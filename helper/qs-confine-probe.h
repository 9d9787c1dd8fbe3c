/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Test builds: the --test-confine-probe of a confined helper. */
#pragma once

#include <glib.h>

#ifdef QS_TEST_CONTROLS
/* From the main loop: tries `what` ("open", "connect" through `sock`, or
 * "exec") and logs whether it was refused. `sock` stays the caller's. */
void qs_confine_probe_start(const char *what, int sock);
#endif
