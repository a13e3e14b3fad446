"""Routine rows: the part of a big log that correlation can account for without a Python walk.

Most lines of a busy cluster's log are the happy path: a batch of pods found, a NodeClaim
created, launched, registered, initialized, deleted. Such a line can change a finding in
three ways only: the pods it gets a node for (``pod_bound``), the NodePool it shows
succeeding (``nodepool_success``), and the times and subscription the input spans. None
of that needs the walk in ``diagnose.correlate``: ``split`` computes it here, with polars,
and hands the walk only the rows whose order and state matter.

A row is *routine* when it is a log line (not an Event) with one of the happy-path event
kinds, no error column, no ERROR/WARN level and no "Successfully assigned" text. A
NodeClaim is *routine* when every row that names it is routine, no other row refers to
it (as the Event's object, a Nominated message, or by name or VM name in a message), and
no NodeClaim of interest came from the same batch of pods. The walk keeps:

* every row that is not routine, and every row of a NodeClaim that is not routine;
* of the routine "found provisionable pod(s)" rows, those that some kept row sees as the
  latest batch (so batch assignment and the nodepool-scoped fallback read the same batch);
* nothing else: routine rows without a NodeClaim and routine NodeClaims are summarised.

The walk on the kept rows plus this summary gives the same findings as the walk on every
row; only ``Correlation.claims`` and ``Correlation.batches`` then list the kept ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import polars as pl

from diagnose.categories import SUCCESS_EVENTS

__all__ = ["Summary", "split"]

ROUTINE_EVENTS = (
    "pods.found",
    "nodeclaim.created",
    "nodeclaim.instance_selected",
    "vm.creating",
    "nic.creating",
    "nodeclaim.deleted",
    *SUCCESS_EVENTS,
)

# the same patterns the walk uses to find a NodeClaim named in a message (diagnose.correlate)
_MENTION = r"aks-[a-z0-9][a-z0-9.-]*[a-z0-9]|(?:nodeclaim|NodeClaim)[ /:\"]+[a-z0-9][a-z0-9.-]*[a-z0-9]"
_VM_NAME = r"aks-([a-z0-9][a-z0-9.-]*[a-z0-9])"
_CLAIM_WORD = r"(?:nodeclaim|NodeClaim)[ /:\"]+([a-z0-9][a-z0-9.-]*[a-z0-9])"
_NOMINATED = r"nodeclaim/([A-Za-z0-9.-]+)"
_SUBSCRIPTION = r"/subscriptions/([0-9a-fA-F-]{36})"


@dataclass(slots=True)
class Summary:
    """What the rows left out of the walk contribute; merged into the walk's state."""

    pod_bound: dict[str, datetime] = field(default_factory=dict)
    nodepool_success: dict[str, list[datetime]] = field(default_factory=dict)
    first: datetime | None = None
    last: datetime | None = None
    subscription: str = ""


def _nonempty(name: str) -> pl.Expr:
    text = pl.col(name).cast(pl.Utf8)  # the lean table holds some as categorical
    return pl.when(text != "").then(text).alias(name)


def split(rows: pl.DataFrame) -> tuple[pl.DataFrame, Summary]:
    """``rows``: the walk's rows in walk order. Returns the rows to walk (same order) and the summary."""
    c = pl.col
    summary = Summary()
    times = rows["time"].drop_nulls()
    if times.len():
        summary.first, summary.last = times.min(), times.max()  # type: ignore[assignment]
    text = pl.when(_nonempty("raw").is_not_null()).then(_nonempty("raw")).otherwise(c("message").cast(pl.Utf8))
    found = rows.select(text.str.extract(_SUBSCRIPTION, 1).drop_nulls().first())
    summary.subscription = found.item() or "" if found.height else ""

    event = c("event").cast(pl.Utf8).fill_null("")
    routine = (
        (c("source").cast(pl.Utf8) == "log")
        & event.is_in(ROUTINE_EVENTS)
        & c("error_code").is_null()
        & c("error_message").is_null()
        & c("category").is_null()
        & ~c("level").cast(pl.Utf8).fill_null("").is_in(["ERROR", "WARN"])
        & ~c("message").cast(pl.Utf8).fill_null("").str.contains("Successfully assigned", literal=True)
    )
    joined = pl.concat_str([_nonempty("message"), _nonempty("raw")], separator=" ", ignore_nulls=True)
    object_claim = (c("object_kind").cast(pl.Utf8) == "NodeClaim") & _nonempty("object_name").is_not_null()
    mentions = object_claim.fill_null(False) | joined.fill_null("").str.contains(_MENTION)
    frame = rows.select(
        "time",
        "pods",
        event.alias("event"),
        _nonempty("nodeclaim").alias("claim"),
        _nonempty("nodepool").alias("nodepool"),
        routine.alias("routine"),
        mentions.alias("mentions"),
        joined.alias("joined"),
        c("message").cast(pl.Utf8),
        c("object_name").cast(pl.Utf8),
    ).with_row_index("pos")
    frame = frame.with_columns(
        ((c("event") == "pods.found").cum_sum().cast(pl.Int64) - 1).alias("batch"),
        pl.when(c("routine") & c("claim").is_not_null() & (c("event") != "pods.found"))
        .then(pl.lit("C"))
        .when(c("routine") & c("claim").is_null() & ~c("mentions") & (c("event") == "pods.found"))
        .then(pl.lit("B"))
        .when(c("routine") & c("claim").is_null() & ~c("mentions") & ~c("event").is_in(SUCCESS_EVENTS))
        .then(pl.lit("N"))
        .otherwise(pl.lit("K"))
        .alias("kind"),
    )
    kept_rows = frame.filter(c("kind") == "K")
    interest = _interest(kept_rows)

    # batch of each claim: its first "created" row after at least one batch
    assigned = (
        frame.filter(c("claim").is_not_null() & (c("event") == "nodeclaim.created") & (c("batch") >= 0))
        .group_by("claim")
        .agg(c("pos").min().alias("assigned_pos"), c("batch").sort_by("pos").first().alias("claim_batch"))
    )
    interest_batches = pl.concat(
        [
            assigned.filter(c("claim").is_in(interest.implode()))["claim_batch"],
            kept_rows.filter((c("event") == "nodeclaim.created") & (c("batch") >= 0))["batch"],
        ]
    ).unique()
    interest = pl.concat(
        [interest, assigned.filter(c("claim_batch").is_in(interest_batches.implode()))["claim"]]
    ).unique()

    c_rows = c("kind") == "C"
    keep_claim = c_rows & c("claim").is_in(interest.implode())
    walked = (c("kind") == "K") | keep_claim
    needed = frame.filter(walked)["batch"].unique()
    keep = walked | ((c("kind") == "B") & c("batch").is_in(needed.implode()))
    mask = frame.select(keep.alias("keep"))["keep"]

    dropped = frame.filter(c_rows & ~c("claim").is_in(interest.implode()))
    if dropped.height:
        summary.nodepool_success = _nodepool_success(dropped)
        summary.pod_bound = _pod_bound(dropped, assigned, frame)
    return rows.filter(mask), summary


def _interest(kept: pl.DataFrame) -> pl.Series:
    """Every NodeClaim a kept row names, one way or another (a superset of what the walk finds)."""
    c = pl.col
    names = kept.select(
        pl.concat_list(
            c("claim"),
            c("object_name"),
            c("joined").str.extract_all(_VM_NAME).list.eval(pl.element().str.strip_prefix("aks-")),
            c("joined").str.extract_all(_CLAIM_WORD).list.eval(pl.element().str.extract(_CLAIM_WORD, 1)),
            pl.when(c("event") == "k8s.Nominated").then(c("message").str.extract(_NOMINATED, 1)),
        ).alias("name")
    )
    return names.explode("name")["name"].drop_nulls().unique()


def _nodepool_success(dropped: pl.DataFrame) -> dict[str, list[datetime]]:
    """Every success row: its own NodePool, else the first one its NodeClaim showed so far."""
    c = pl.col
    has = c("nodepool").is_not_null()
    first = pl.when(has & (has.cum_sum().over("claim", order_by="pos") == 1)).then(c("nodepool"))
    rows = (
        dropped.with_columns(first.forward_fill().over("claim", order_by="pos").alias("claim_pool"))
        .filter(c("event").is_in(SUCCESS_EVENTS) & c("time").is_not_null())
        .select(pl.coalesce(c("nodepool"), c("claim_pool")).alias("pool"), "time")
        .drop_nulls("pool")
        .group_by("pool")
        .agg(c("time"))
    )
    return {pool: list(moments) for pool, moments in rows.iter_rows()}


def _pod_bound(dropped: pl.DataFrame, assigned: pl.DataFrame, frame: pl.DataFrame) -> dict[str, datetime]:
    """The pods each routine NodeClaim got a node for: its batch's, unless shared by then."""
    c = pl.col
    success = (
        dropped.filter(c("event").is_in(SUCCESS_EVENTS) & c("time").is_not_null())
        .group_by("claim")
        .agg(c("pos").min().alias("success_pos"), c("time").sort_by("pos").first().alias("success_time"))
        .join(assigned, on="claim", how="inner")
        .filter(c("assigned_pos") < c("success_pos"))
    )
    if success.height == 0:
        return {}
    # claims of the same batch assigned before this claim's success: shared when two or more
    same_batch = success.select("claim", "claim_batch", "success_pos").join(
        assigned.select(c("claim_batch"), c("assigned_pos").alias("other_pos")), on="claim_batch"
    )
    alone = (
        same_batch.filter(c("other_pos") < c("success_pos"))
        .group_by("claim")
        .agg(pl.len().alias("sharing"))
        .filter(c("sharing") < 2)["claim"]
    )
    batches = frame.filter(c("event") == "pods.found").select(c("batch").alias("claim_batch"), "pods")
    bound = (
        success.filter(c("claim").is_in(alone.implode()))
        .join(batches, on="claim_batch", how="inner")
        .select(c("pods").alias("pod"), "success_time")
        .explode("pod")
        .drop_nulls("pod")
        .group_by("pod")
        .agg(c("success_time").max())
    )
    return dict(bound.iter_rows())
