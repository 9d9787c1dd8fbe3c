# SPDX-License-Identifier: GPL-2.0-or-later
"""Fixtures of the integration tests (see README.md in this directory)."""

import pytest

from harness import DBusDaemon, Guest, Libvirtd, Paths, Qemu, Xvfb, exits, kill_strays
from harness import timeout as _timeout
from harness.qemu import TEST_FLAVOURS as QEMU_FLAVOURS, chroot_mounts, sweep_stale_run_dirs
from harness.shared_guest import SharedGuests

# The timeout hooks live in harness/timeout.py.
pytest_runtest_setup = _timeout.pytest_runtest_setup
pytest_runtest_call = _timeout.pytest_runtest_call
pytest_runtest_teardown = _timeout.pytest_runtest_teardown


def pytest_addoption(parser):
    _timeout.addoption(parser)


def pytest_configure(config):
    _timeout.configure(config)
    # Registered here, not in each pytest.ini: tests/faults shares this hook.
    config.addinivalue_line(
        "markers", "plain_run: a correctness test judged on the run of a figure test "
        "(harness/shared_run.py) that belongs to the plain build; tools/check runs it "
        "with the figures, once, and never against the sanitizer build")
    # A test passes or fails on its first run (tests/README.md, "Correctness
    # and figures are apart"): a rerun plugin would let a defect that shows
    # half the time pass, so its presence is refused rather than trusted to
    # stay unused.
    if config.pluginmanager.hasplugin("rerunfailures") and \
            (getattr(config.option, "reruns", 0) or 0) > 0:
        raise pytest.UsageError("tests are never rerun here: drop --reruns")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("flaky"):
            raise pytest.UsageError(f"{item.nodeid}: tests are never rerun here "
                                    "(the flaky marker is refused)")
    # The desktop guest's tests run only when asked for by marker (pytest.ini).
    if "desktop" not in (config.option.markexpr or ""):
        skipped = [i for i in items if i.get_closest_marker("desktop")]
        if skipped:
            config.hook.pytest_deselected(items=skipped)
            items[:] = [i for i in items if not i.get_closest_marker("desktop")]


def pytest_sessionstart(session):
    # Run dirs of harness processes that were SIGKILLed (nothing could clean up).
    sweep_stale_run_dirs()


def pytest_sessionfinish(session, exitstatus):
    strays = kill_strays()
    if strays:
        print(f"\nqemu-spice harness: killed stray processes at session end: {strays}")


@pytest.fixture(scope="session")
def paths():
    return Paths()


@pytest.fixture(scope="session")
def guest(paths):
    """The test guest (ERROR naming tests/guest/build-guest if it cannot be built)."""
    return Guest.build(paths)


@pytest.fixture(params=QEMU_FLAVOURS)
def qemu_flavour(request, paths):
    """'host' (qemu 7.2) or a chroot suite; ERROR naming make-chroot if missing."""
    flavour = request.param
    if flavour != "host":
        paths.require_chroot(flavour)
    return flavour


@pytest.fixture
def qemu_factory(request, paths):
    """make(**Qemu kwargs) -> a started Qemu, closed at teardown.

    Defaults: the test's qemu_flavour if it uses that fixture (else 'host') and
    the `guest` fixture, which the test must then request itself (or pass
    guest=None for no kernel)."""
    started = []

    def make(**kwargs):
        if "flavour" not in kwargs:
            kwargs["flavour"] = (request.getfixturevalue("qemu_flavour")
                                 if "qemu_flavour" in request.fixturenames else "host")
        if "guest" not in kwargs:
            # Requesting `guest` in the test's signature makes a missing guest
            # an ERROR at setup; a lazy build here would only FAIL the call.
            if "guest" not in request.fixturenames:
                raise TypeError("qemu_factory: request the `guest` fixture in the test "
                                "or pass guest=None")
            kwargs["guest"] = request.getfixturevalue("guest")
        kwargs.setdefault("paths", paths)
        q = Qemu(**kwargs)
        q.start()
        started.append(q)
        return q

    yield make
    errors = []
    for q in reversed(started):
        try:
            q.close()
        except Exception as e:  # noqa: BLE001 - report all of them
            errors.append(str(e))
    if errors:
        pytest.fail("qemu teardown: " + "; ".join(errors))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    # Each phase's report on the item: shared_qemu gives its guest back
    # for the next test only after a call that passed.
    report = (yield).get_result()
    setattr(item, f"_qs_report_{report.when}", report)


@pytest.fixture(scope="module")
def _guests_of_file():
    guests = SharedGuests()
    yield guests
    guests.close()


@pytest.fixture
def shared_qemu(request, _guests_of_file, paths):
    """make(**Qemu kwargs) -> the file's started qemu of that configuration,
    booted by the first test that asks for it (harness/shared_guest.py).

    For tests that attach a helper, watch and detach: never one that kills,
    pauses, reboots or reconfigures qemu (those take qemu_factory). Serial
    lines of earlier tests stay in its log: wait for what the test itself
    causes with since=q.serial_mark(). Defaults as qemu_factory's. After the
    test, what it left is checked (a helper still running, qemu paused or
    gone: the test fails); after a failure the guest is not lent again."""
    lent = []

    def make(**kwargs):
        if "flavour" not in kwargs:
            kwargs["flavour"] = (request.getfixturevalue("qemu_flavour")
                                 if "qemu_flavour" in request.fixturenames else "host")
        if "guest" not in request.fixturenames:
            raise TypeError("shared_qemu: request the `guest` fixture in the test")
        kwargs["guest"] = request.getfixturevalue("guest")
        kwargs.setdefault("paths", paths)
        q = _guests_of_file.lend(**kwargs)
        lent.append(q)
        return q

    yield make
    call = getattr(request.node, "_qs_report_call", None)
    passed = call is not None and not call.failed
    problems = []
    for q in lent:
        problems += _guests_of_file.give_back(q, passed)
    # After the file's last borrower the guests go at once: a busy guest
    # left running would take a core from the file's remaining tests.
    later = request.session.items[request.session.items.index(request.node) + 1:]
    if not any(i.module is request.node.module and "shared_qemu" in i.fixturenames
               for i in later):
        _guests_of_file.close()
    if problems:
        pytest.fail("shared qemu: " + "; ".join(problems))


@pytest.fixture
def helper_binary(paths):
    return paths.require_helper()


@pytest.fixture
def test_client(paths):
    return paths.require_test_client()


@pytest.fixture
def dbus_daemon():
    with DBusDaemon() as bus:
        yield bus


@pytest.fixture(scope="module")
def _libvirtd_of_file():
    # One daemon per test file: starting and stopping it for each test took
    # 1.3-1.5 s and 0.3-0.4 s (load 13, 2026-12-07), for about 30 tests.
    with Libvirtd() as daemon:
        yield daemon


@pytest.fixture
def libvirtd(_libvirtd_of_file):
    """libvirtd for one test: its file's daemon, answering, and after the
    test no qs-test-* domain and no hook of it left (Libvirtd.reset)."""
    yield _libvirtd_of_file.lease()
    _libvirtd_of_file.reset()


@pytest.fixture
def xvfb():
    with Xvfb() as x:
        yield x


@pytest.fixture(autouse=True)
def _no_stray_qemu(paths):
    """Every test: afterwards no qemu of ours runs and no chroot mount is left.

    (A make-chroot build in progress has mounts of its own in its temporary
    directory; only the finished chroots are checked.)"""
    yield
    strays = kill_strays(kind="qemu")
    mounts = chroot_mounts(paths)
    if strays or mounts:
        pytest.fail(f"left behind: qemu processes {strays}, mounts {mounts}")



@pytest.fixture(autouse=True)
def _all_heard():
    """Every test: each helper or launcher it started was heard at its end
    (harness/exits.py), so its exit status and its sanitizer reports count."""
    exits.unheard()
    yield
    left = exits.unheard()
    if left:
        pytest.fail(f"started but never heard at exit: {left}")
