/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Built without the module's directory in its RUNPATH: TLS is refused with
 * an error naming the module and where it was looked for, and stays so. */
#include <string.h>
#include <gio/gio.h>

#include "net/qs-tls.h"

static void test_missing(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GError) again = NULL;
    g_autoptr(QsTlsCreds) creds = NULL;

    g_assert_false(qs_tls_load(&error));
    g_assert_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
    g_assert_nonnull(strstr(error->message, "TLS is not available: no qemu-spice-tls.so in "));
    creds = qs_tls_creds_load("/nonexistent", &again);
    g_assert_null(creds);
    g_assert_error(again, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
    g_assert_cmpstr(again->message, ==, error->message);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/net/tls/missing-module", test_missing);
    return g_test_run();
}
