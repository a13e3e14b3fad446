"""Shared fixtures for karp-tui tests: the founding log, replayed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tui.app import KarpTui
from tui.sources.replay import Timeline, load_frame

ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "fixtures" / "logs" / "seed-karpenter-2023-11-24.log")
SEED_RELATIVE = "fixtures/logs/seed-karpenter-2023-11-24.log"  # as a user types it: screens do not depend on the checkout


@pytest.fixture
def seed_path() -> str:
    return SEED


@pytest.fixture
def seed_timeline(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Timeline]:
    monkeypatch.chdir(ROOT)

    def load(progress: Callable[[int, int], None] | None = None) -> Timeline:
        return Timeline(*load_frame([SEED_RELATIVE], progress=progress))

    return load


@pytest.fixture
def seed_app(seed_timeline: Callable[..., Timeline]) -> KarpTui:
    return KarpTui(load=seed_timeline)
