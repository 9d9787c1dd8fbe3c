# SPDX-License-Identifier: GPL-2.0-or-later
"""Fixtures of the fault tests: those of tests/integration (its harness, its
qemu/helper/client fixtures, its timeout and its no-stray-qemu check), plus
--long for the soak-sized variants."""

import importlib.util
import sys
from pathlib import Path

import pytest

_INTEGRATION = Path(__file__).resolve().parent.parent / "integration"
# Appended, not prepended: nothing there may shadow a module of this directory.
if str(_INTEGRATION) not in sys.path:
    sys.path.append(str(_INTEGRATION))

# Loaded under its own name: `conftest` is this file's module name.
_spec = importlib.util.spec_from_file_location("qs_integration_conftest",
                                               _INTEGRATION / "conftest.py")
_integration = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _integration
_spec.loader.exec_module(_integration)

# Hooks and fixtures pytest finds by name in this module.
pytest_runtest_setup = _integration.pytest_runtest_setup
pytest_runtest_call = _integration.pytest_runtest_call
pytest_runtest_teardown = _integration.pytest_runtest_teardown
pytest_configure = _integration.pytest_configure
pytest_collection_modifyitems = _integration.pytest_collection_modifyitems
pytest_sessionstart = _integration.pytest_sessionstart
pytest_sessionfinish = _integration.pytest_sessionfinish
paths = _integration.paths
guest = _integration.guest
qemu_flavour = _integration.qemu_flavour
qemu_factory = _integration.qemu_factory
helper_binary = _integration.helper_binary
test_client = _integration.test_client
_no_stray_qemu = _integration._no_stray_qemu
_all_heard = _integration._all_heard


def pytest_addoption(parser):
    _integration.pytest_addoption(parser)
    parser.addoption("--long", action="store_true", default=False,
                     help="soak-sized fault tests (a 60 s stalled client, "
                          "not 20 s; 20 idle VMs, not 4)")


@pytest.fixture
def long_run(request):
    """True with --long."""
    return request.config.getoption("--long")
