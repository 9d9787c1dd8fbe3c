# SPDX-License-Identifier: GPL-2.0-or-later
"""The libvirt hook (libvirt-hooks/qemu-spice) in a real libvirtd: installed
in the qemu.d/ of the harness's libvirtd (which sees a private directory as
/etc/libvirt/hooks, so a qemu-spice hook installed on the host neither
runs for these domains nor is touched), libvirtd restarted, then 'virsh
start' brings a helper up for an opted-in domain and 'virsh destroy' takes
it down."""

import os
import time
from pathlib import Path

import pytest
from PIL import Image

from harness import Xvfb
from serve_support import require_tool
from test_launcher_spice import wait_guest_ready
from viewer_support import remote_viewer_sight

from test_launcher_libvirt import (OPT_IN, LauncherEnv, metadata, pid_alive,
                                   start_domain, wait_for)



@pytest.fixture
def hooked_libvirtd(libvirtd, paths):
    """The fixture's libvirtd restarted with our hook installed (probe helper)."""
    yield from hook_installed(libvirtd, paths, LauncherEnv(paths))


@pytest.fixture
def hooked_libvirtd_real(libvirtd, paths, helper_binary):
    """The same with the real qemu-spice helper."""
    yield from hook_installed(libvirtd, paths, LauncherEnv(paths, helper=helper_binary))


def hook_installed(libvirtd, paths, env):
    if not libvirtd.owned:
        env.cleanup()
        pytest.fail("the hook test restarts libvirtd: stop the running libvirtd first")
    etc = env.dir / "etc"
    (etc / "qemu-spice").mkdir(parents=True)
    env.conf = etc / "qemu-spice" / "qemu-spice.conf"
    env.write_conf()
    template = (paths.repo / "libvirt-hooks" / "qemu-spice").read_text()
    hook = Path(libvirtd.hooks_dir) / "qemu.d" / "qemu-spice"
    hook.write_text(template.replace("@BINDIR@", str(env.launcher.parent))
                    .replace("@SYSCONFDIR@", str(etc)))
    os.chmod(hook, 0o755)
    try:
        libvirtd.stop()
        libvirtd.start()
        # libvirtd reads the private directory as /etc/libvirt/hooks
        with open(f"/proc/{libvirtd.pids['libvirtd']}/mountinfo") as f:
            mounts = [line.split()[4] for line in f]
        assert libvirtd.HOST_HOOKS in mounts, mounts
        yield libvirtd, env
    finally:
        hook.unlink()
        env.cleanup()


def test_hook_starts_and_stops_helper(hooked_libvirtd, guest):
    libvirtd, env = hooked_libvirtd
    name = "qs-test-hook-in"
    t0 = time.monotonic()
    start_domain(libvirtd, name, guest, env.dir, metadata=OPT_IN)
    started = time.monotonic() - t0
    # define + start returned promptly: the hook did not wait for the helper
    assert started < 10, started
    # from the moment 'virsh start' returns: starting (4) or attached (0)
    res = env.run("status", name)
    assert res.returncode in (4, 0), (res.returncode, res.stdout, res.stderr)
    if res.returncode == 4:
        assert res.stdout.startswith(f"{name}: starting (the libvirt hook's launcher"), res.stdout
    st = wait_for(lambda: (s := env.state(name)) and pid_alive(s["helper_pid"]) and s,
                  30, "the hook-started helper")
    rep = env.probe_report(name, st["helper_pid"])
    assert rep["argv"][1] == "--dbus-p2p-fd=3" and rep["fds"]["3"].startswith("socket:")
    meta = metadata(libvirtd, name)
    assert f'port="{st["port"]}"' in meta and 'autostart="yes"' in meta
    assert st["supervise"] is True

    # a domain that does not opt in gets nothing
    other = start_domain(libvirtd, "qs-test-hook-out", guest, env.dir, persistent=False)
    time.sleep(2)
    assert env.state(other) is None and len(env.helper_pids()) == 1
    libvirtd.virsh("destroy", other)

    libvirtd.virsh("destroy", name)
    wait_for(lambda: env.run_files() == [], 15, "the state files to go")
    # the monitor removes the files, then exits (slower under ASan and load)
    wait_for(lambda: not pid_alive(st["helper_pid"]) and not pid_alive(st["monitor_pid"]),
             5, "the helper and its monitor to exit")
    assert env.helper_pids() == []
    # the opt-in stays, the console is gone
    assert metadata(libvirtd, name, config=True) == '<console autostart="yes"/>'

    # and again: a second start works the same
    libvirtd.virsh("start", name)
    st2 = wait_for(lambda: (s := env.state(name)) and pid_alive(s["helper_pid"]) and s,
                   30, "the second hook-started helper")
    assert st2["helper_pid"] != st["helper_pid"]

    # a quick stop and start: the new launcher waits for the old one's cleanup
    libvirtd.virsh("destroy", name)
    libvirtd.virsh("start", name)
    st3 = wait_for(lambda: (s := env.state(name)) and s["helper_pid"] != st2["helper_pid"]
                   and pid_alive(s["helper_pid"]) and s, 30, "the third helper")
    assert not pid_alive(st2["helper_pid"])
    time.sleep(1)  # the old monitor's cleanup must not remove the new console
    assert env.state(name)["helper_pid"] == st3["helper_pid"]
    assert f'pid="{st3["helper_pid"]}"' in metadata(libvirtd, name)
    assert len(env.helper_pids()) == 1

    libvirtd.virsh("destroy", name)
    wait_for(lambda: env.run_files() == [], 15, "the state files to go")
    assert env.helper_pids() == []


def test_hook_config_list_opt_in(hooked_libvirtd, guest):
    libvirtd, env = hooked_libvirtd
    env.write_conf(launcher__autostart="list", launcher__autostart_domains="qs-test-hook-listed")
    name = start_domain(libvirtd, "qs-test-hook-listed", guest, env.dir, persistent=False)
    st = wait_for(lambda: (s := env.state(name)) and pid_alive(s["helper_pid"]) and s,
                  30, "the hook-started helper")
    libvirtd.virsh("destroy", name)
    wait_for(lambda: env.run_files() == [], 15, "the state files to go")
    assert not pid_alive(st["helper_pid"]) and env.helper_pids() == []


def test_hook_real_helper_in_remote_viewer(hooked_libvirtd_real, guest, tmp_path):
    """The whole chain of docs/operations.md: an opted-in domain started with
    virsh gets a console from the hook, and remote-viewer opened on the .vv
    file of 'qemu-spice-launcher console --format vv' shows the guest."""
    viewer = require_tool("remote-viewer", "virt-viewer")
    require_tool("import", "imagemagick")
    libvirtd, env = hooked_libvirtd_real
    name = start_domain(libvirtd, "qs-test-hook-rv", guest, env.dir, metadata=OPT_IN)
    st = wait_for(lambda: (s := env.state(name)) and pid_alive(s["helper_pid"]) and s,
                  30, "the hook-started helper")
    wait_guest_ready(env, name)
    res = env.run("console", name, "--format", "vv", check=True)
    vv = tmp_path / "console.vv"
    vv.write_text(res.stdout)
    vv.chmod(0o600)
    assert f"port={st['port']}" in res.stdout, res.stdout
    # The reference: qemu's own picture of the (idle, still) guest.
    ref_ppm = tmp_path / "ref.ppm"
    libvirtd.virsh("screenshot", name, str(ref_ppm))
    with Image.open(ref_ppm) as img:
        img = img.convert("RGB")
        w, h, ref = img.width, img.height, img.tobytes()
    with Xvfb(screen="1600x1000x24") as x:
        best = remote_viewer_sight(viewer, vv, x, w, h, ref, tmp_path)
    log_path = tmp_path / "remote-viewer.log"
    assert best and best[2] == 1.0, (
        f"the guest's picture never appeared whole in remote-viewer ({best}): "
        f"{log_path.read_text()[-2000:]}; helper log: {env.log(name)[-2000:]}")
    libvirtd.virsh("destroy", name)
    wait_for(lambda: env.run_files() == [], 15, "the state files to go")
