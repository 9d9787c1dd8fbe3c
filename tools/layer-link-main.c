/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The entry point of helper/meson.build's per-layer link checks: linking is
 * the whole test (every reference resolved by the layer itself or by the
 * layers below it that the table allows); it is never run. */
int main(void)
{
    return 0;
}
