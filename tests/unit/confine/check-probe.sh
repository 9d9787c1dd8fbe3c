#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Checks that the confinement probe (a test-only trigger) is compiled into a
# binary exactly when expected: check-probe.sh present|absent BINARY...
set -eu
want=$1
shift
for bin in "$@"; do
    if ! [ -f "$bin" ]; then
        echo "no such binary: $bin" >&2
        exit 1
    fi
    if grep -a -q -e 'test-confine-probe' -e 'confine-probe %s' "$bin"; then
        got=present
    else
        got=absent
    fi
    echo "$bin: probe $got"
    if [ "$got" != "$want" ]; then
        echo "expected the probe to be $want in $bin" >&2
        exit 1
    fi
done
