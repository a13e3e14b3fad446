"""The quota pane: usage/limit gauges (regional, each family in use, spot) and the demand waiting."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from tui.state import ClusterState
from tui.views import GaugeView, format_time, gauges

__all__ = ["QuotaPane", "render_gauge"]

_BAR = 20


def render_gauge(gauge: GaugeView) -> Text:
    text = Text()
    text.append(f"{gauge.name}", style="bold")
    text.append(f" ({gauge.scope})\n", style="dim")
    if gauge.limit is None or gauge.usage is None:
        text.append(" " + "·" * _BAR + "  ?/? vCPUs", style="dim")
        text.append("  not read yet", style="dim")
    else:
        used = min(_BAR, round(_BAR * gauge.usage / gauge.limit)) if gauge.limit else _BAR
        over = gauge.demand_vcpus > (gauge.headroom or 0)
        text.append(" " + "█" * used, style="red" if gauge.headroom == 0 else "yellow" if over else "green")
        text.append("░" * (_BAR - used), style="dim")
        text.append(f"  {gauge.usage}/{gauge.limit} vCPUs", style="bold")
        text.append(f"  headroom {gauge.headroom}")
        text.append(f"  read {format_time(gauge.read_at)} ({gauge.source})", style="dim")
    if gauge.demand_vcpus:
        text.append("\n waiting: ", style="bold")
        claims = ", ".join(gauge.demand_claims)
        text.append(f"{gauge.demand_vcpus} vCPUs needed for {gauge.demand_pods} pods ({claims})")
        if gauge.limit is not None and gauge.usage is not None:
            need = gauge.usage + gauge.demand_vcpus
            style = "bold red" if need > gauge.limit else "green"
            text.append(f"; fits only with a limit of {need}" if need > gauge.limit else "; fits", style=style)
    return text


class QuotaPane(VerticalScroll):
    """vCPU quota headroom and what waits on it."""

    BORDER_TITLE = "Quota headroom"

    def compose(self) -> ComposeResult:
        yield Static(id="quota-gauges")

    def show(self, state: ClusterState) -> None:
        text = Text()
        for index, gauge in enumerate(gauges(state)):
            if index:
                text.append("\n")
            text.append_text(render_gauge(gauge))
        region = f" {state.region}" if state.region else ""
        self.border_title = f"Quota headroom{region}"
        self.query_one("#quota-gauges", Static).update(text)
