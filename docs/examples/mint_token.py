#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Reference minting program for qemu-spice's signed console tokens.

docs/integration.md ("Signed console tokens") specifies the bytes; this is
the same specification as a program a cloud can read, run or port. Python's
standard library only. tools/check runs it against the helper.

  mint_token.py mint --master-key-file F --key-id N --vm UUID
                     [--rights view|control] [--ttl SECONDS] [--single-use]
  mint_token.py helper-keys --master-key-file F --vm UUID --key-id N [--key-id M]

The master key file holds one key per line as "ID=HEX" (16 to 64 bytes),
the format of the launcher's [tokens] master-keys file; `helper-keys`
prints the key file the helper reads (--token-keys-file).
"""
import argparse
import base64
import hashlib
import hmac
import os
import struct
import sys
import time
import uuid as uuidlib

PREFIX = "qst."
VERSION = 1
FLAG_VIEW_ONLY = 1
FLAG_SINGLE_USE = 2
MAC_LABEL = b"qemu-spice token v1"
KEY_LABEL = b"qemu-spice vm key v1"


def derive_vm_key(master: bytes, vm_uuid: str) -> bytes:
    """The only key the helper of VM `vm_uuid` ever holds."""
    return hmac.new(master, KEY_LABEL + uuidlib.UUID(vm_uuid).bytes,
                    hashlib.sha256).digest()


def mint(vm_key: bytes, vm_uuid: str, key_id: int, expiry: int,
         view_only: bool = False, single_use: bool = False,
         token_id: bytes = None) -> str:
    raw_uuid = uuidlib.UUID(vm_uuid).bytes
    flags = (FLAG_VIEW_ONLY if view_only else 0) | \
        (FLAG_SINGLE_USE if single_use else 0)
    if token_id is None:
        token_id = os.urandom(8)
    body = struct.pack(">BBBI8s4s", VERSION, key_id, flags, expiry, token_id,
                       raw_uuid[:4])
    mac = hmac.new(vm_key, MAC_LABEL + body + raw_uuid,
                   hashlib.sha256).digest()[:16]
    text = base64.urlsafe_b64encode(body + mac).decode().rstrip("=")
    return PREFIX + text


def read_master_keys(path: str) -> dict:
    keys = {}
    with open(path, encoding="ascii") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or line.startswith("["):
                continue
            kid, _, hexkey = line.partition("=")
            keys[int(kid)] = bytes.fromhex(hexkey.strip())
    return keys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("mint")
    m.add_argument("--master-key-file", required=True)
    m.add_argument("--key-id", type=int, required=True)
    m.add_argument("--vm", required=True)
    m.add_argument("--rights", choices=("view", "control"), default="control")
    m.add_argument("--ttl", type=int, default=300)
    m.add_argument("--single-use", action="store_true")
    h = sub.add_parser("helper-keys")
    h.add_argument("--master-key-file", required=True)
    h.add_argument("--vm", required=True)
    h.add_argument("--key-id", type=int, action="append", required=True)
    args = ap.parse_args()
    master = read_master_keys(args.master_key_file)
    if args.cmd == "mint":
        vm_key = derive_vm_key(master[args.key_id], args.vm)
        print(mint(vm_key, args.vm, args.key_id, int(time.time()) + args.ttl,
                   view_only=args.rights == "view",
                   single_use=args.single_use))
    else:
        print("[tokens]")
        print("vm=" + args.vm)
        for kid in args.key_id:
            print("key-%d=%s" % (kid, derive_vm_key(master[kid], args.vm).hex()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
