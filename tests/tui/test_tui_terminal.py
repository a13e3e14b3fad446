"""The real karp-tui program in a real terminal (tmux): what a person sees on the screen."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

TMUX = shutil.which("tmux") or ("/usr/bin/tmux" if Path("/usr/bin/tmux").exists() else None)
KARP_TUI = Path(sys.executable).parent / "karp-tui"
QUOTA_NUMBERS = re.compile(r"limit 20, usage 14, required 16, new limit 30")

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


def _tmux(session: str, *args: str) -> str:
    """Run tmux on a server of our own (socket named after the session), never the user's."""
    assert TMUX is not None
    done = subprocess.run([TMUX, "-L", session, *args], capture_output=True, text=True, timeout=10, check=True)
    return done.stdout


def _wait_for_screen(session: str, seen: Callable[[str], bool], timeout: float = 20.0) -> str:
    """Poll capture-pane until ``seen(screen)``; bounded by ``timeout`` seconds. A session that has
    ended (the program quit) reads as an empty screen."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    screen = ""
    while time.monotonic() < deadline:
        try:
            screen = _tmux(session, "capture-pane", "-p", "-t", session)
        except subprocess.CalledProcessError:
            screen = ""  # the program has exited and its tmux session with it
        if seen(screen):
            return screen
        pause.wait(0.1)
    raise AssertionError(f"screen never showed what was expected; last screen:\n{screen}")


@pytest.fixture
def session() -> Iterator[str]:
    name = f"karp-tui-test-{uuid.uuid4().hex[:8]}"
    yield name
    subprocess.run([TMUX or "tmux", "-L", name, "kill-server"], capture_output=True, timeout=10, check=False)


def test_tui_terminal_shows_quota_finding(session: str, seed_path: str) -> None:
    _tmux(session, "-f", os.devnull, "new-session", "-d", "-s", session, "-x", "160", "-y", "48",
          f"env -u COLUMNS -u LINES TERM=xterm-256color {KARP_TUI} {seed_path}")
    assert _tmux(session, "display", "-p", "-t", session, "#{window_width}x#{window_height}").strip() == "160x48"
    screen = _wait_for_screen(session, lambda s: "general-purpose-pq7gl" in s and "14/20 vCPUs" in s)
    assert "10 × Deployment default/inflate · regional-vcpu-quota (5 named + 5 counted)" in screen
    assert "Standard_D16ls_v5" in screen
    _tmux(session, "send-keys", "-t", session, "4")
    screen = _wait_for_screen(session, lambda s: QUOTA_NUMBERS.search(s) is not None)
    numbers = QUOTA_NUMBERS.search(screen)
    assert numbers is not None
    assert [int(n) for n in re.findall(r"\d+", numbers.group(0))] == [20, 14, 16, 30]
    _tmux(session, "send-keys", "-t", session, "q")
    _wait_for_screen(session, lambda s: "general-purpose-pq7gl" not in s, timeout=10)


def test_tui_terminal_live_against_the_kube_emulator(session: str) -> None:
    from sim.kube.emulator import KubeEmulator
    from sim.scenarios.founding import seed_cluster, set_replicas

    with KubeEmulator(node_ready_delay=0.05, node_gone_delay=0.05, tick=0.05) as kube:
        seed_cluster(kube)
        set_replicas(kube, 10)
        assert kube.wait_idle(10)
        _tmux(session, "-f", os.devnull, "new-session", "-d", "-s", session, "-x", "160", "-y", "48",
              f"env -u COLUMNS -u LINES TERM=xterm-256color {KARP_TUI} --live --kubeconfig {kube.kubeconfig}"
              " --interval 1")
        screen = _wait_for_screen(
            session, lambda s: "10 × Deployment default/inflate" in s and "connected 10 pending pods" in s
        )
        assert "live: kubeconfig" in screen
        assert "1/256M" in screen  # requests read from the pods themselves
    # the emulator is gone: the screen says so and keeps retrying
    screen = _wait_for_screen(session, lambda s: "connection lost" in s or "read failed" in s)
    assert re.search(r"(connection lost|read failed).*, retrying in \d+s", screen)
    _tmux(session, "send-keys", "-t", session, "q")


def test_tui_terminal_sim_shows_live_quota(session: str, seed_path: str, tmp_path: Path) -> None:
    import json

    from sim.arm import ArmEmulator

    with ArmEmulator(location="westus2", quotas={"cores": 20}, usages={"cores": 14}) as arm:
        endpoints = tmp_path / "endpoints.json"
        endpoints.write_text(json.dumps({"arm": arm.endpoint.as_dict(), "logs": [seed_path]}))
        _tmux(session, "-f", os.devnull, "new-session", "-d", "-s", session, "-x", "160", "-y", "48",
              f"env -u COLUMNS -u LINES TERM=xterm-256color {KARP_TUI} --sim {endpoints} --interval 1")
        screen = _wait_for_screen(session, lambda s: "(azure)" in s and "14/20 vCPUs" in s)
        assert "16 vCPUs needed for 10 pods" in screen
        assert "10 × Deployment default/inflate" in screen
        _tmux(session, "send-keys", "-t", session, "q")
        _wait_for_screen(session, lambda s: "14/20 vCPUs" not in s, timeout=10)
