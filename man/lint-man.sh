#!/bin/sh
# Fails when groff has anything to say about a man page.
out=$("$1" -man -ww -z "$2" 2>&1)
if [ -n "$out" ]; then
    printf '%s\n' "$out"
    exit 1
fi
