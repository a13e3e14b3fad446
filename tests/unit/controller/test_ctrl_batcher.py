from __future__ import annotations

import threading

from provisioner.controller.batcher import Batcher


class Tick:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_ctrl_batch_closes_after_idle() -> None:
    tick = Tick()
    b = Batcher(1.0, 10.0, clock=tick)
    assert not b.ready()
    b.add(["default/a"])
    tick.t += 0.9
    assert not b.ready()
    b.add(["default/b"])  # a new pod extends the window
    tick.t += 0.9
    assert not b.ready()
    tick.t += 0.2
    assert b.ready()
    assert b.take() == ["default/a", "default/b"]
    assert not b.ready()


def test_ctrl_batch_known_pod_does_not_extend_window() -> None:
    tick = Tick()
    b = Batcher(1.0, 10.0, clock=tick)
    b.add(["default/a"])
    tick.t += 0.8
    assert b.add(["default/a"]) == 0
    tick.t += 0.2
    assert b.ready()


def test_ctrl_batch_closes_at_max_even_with_steady_arrivals() -> None:
    tick = Tick()
    b = Batcher(1.0, 10.0, clock=tick)
    for i in range(20):
        b.add([f"default/p{i}"])
        if b.ready():
            break
        tick.t += 0.5
    assert b.ready()
    assert tick.t - 100.0 == 10.0
    assert len(b.take()) == 21 - 1


def test_ctrl_batch_trigger_and_stop() -> None:
    tick = Tick()
    b = Batcher(1.0, 10.0, clock=tick)
    b.trigger()
    assert b.ready()
    assert b.wait(timeout=0.0) == []
    done = threading.Event()
    result: list[object] = []

    def worker() -> None:
        result.append(b.wait())
        done.set()

    t = threading.Thread(target=worker)
    t.start()
    b.stop()
    assert done.wait(5)
    assert result == [None]
    t.join()


def test_ctrl_batch_wait_returns_when_deadline_passed() -> None:
    tick = Tick()
    b = Batcher(1.0, 10.0, clock=tick)
    b.add(["default/a"])
    tick.t += 1.0
    assert b.wait(timeout=5) == ["default/a"]
    assert b.wait(timeout=0.0) is None
