"""Rendering a report: human text (rich), JSON (stable schema) and Markdown."""

from __future__ import annotations

from typing import IO

from diagnose.findings import Report
from diagnose.render.json import dumps, report_to_json
from diagnose.render.markdown import render_markdown
from diagnose.render.text import render_text

__all__ = ["FORMATS", "render", "report_to_json"]

FORMATS = ("text", "json", "markdown")


def render(report: Report, fmt: str, stream: IO[str], color: bool = False) -> None:
    """Write ``report`` to ``stream`` in ``fmt`` (text | json | markdown)."""
    if fmt == "json":
        stream.write(dumps(report))
    elif fmt == "markdown":
        stream.write(render_markdown(report))
    else:
        render_text(report, stream, color=color)
