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

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import polars as pl

from diagnose.categories import SUCCESS_EVENTS

__all__ = ["CLAIM_WORD", "NOMINATED", "ROUTINE_COLUMNS", "SUBSCRIPTION", "VM_NAME", "Summary", "split", "split_deferred"]

ROUTINE_EVENTS = (
    "pods.found",
    "nodeclaim.created",
    "nodeclaim.instance_selected",
    "vm.creating",
    "nic.creating",
    "nodeclaim.deleted",
    *SUCCESS_EVENTS,
)

# the columns ``split`` reads (the walk's rows come back with the ones given, and ``_row``)
ROUTINE_COLUMNS = (
    "time", "pods", "event", "nodeclaim", "nodepool", "source", "error_code", "error_message", "category", "level",
    "message", "raw", "object_kind", "object_name",
)  # fmt: skip

# how a NodeClaim, a Nominated pod's claim and a subscription are named in a text; the walk in
# diagnose.correlate compiles these same patterns
VM_NAME = r"aks-([a-z0-9][a-z0-9.-]*[a-z0-9])"
CLAIM_WORD = r"(?:nodeclaim|NodeClaim)[ /:\"]+([a-z0-9][a-z0-9.-]*[a-z0-9])"
NOMINATED = r"nodeclaim/([A-Za-z0-9.-]+)"
SUBSCRIPTION = r"/subscriptions/([0-9a-fA-F-]{36})"
_MENTION = f"{VM_NAME}|{CLAIM_WORD}"


@dataclass(slots=True)
class Summary:
    """What the rows left out of the walk contribute; merged into the walk's state."""

    pod_bound: dict[str, datetime] = field(default_factory=dict)
    nodepool_success: dict[str, pl.Series] = field(default_factory=dict)  # NodePool -> success times
    first: datetime | None = None
    last: datetime | None = None
    subscription: str = ""


def _nonempty(name: str) -> pl.Expr:
    """The column with "" as null (text or categorical alike)."""
    return pl.when(pl.col(name) != "").then(pl.col(name)).alias(name)


def _text(name: str) -> pl.Expr:
    return pl.col(name).cast(pl.Utf8)  # the lean table holds some columns as categorical


# row kinds (see the module doc): kept, routine NodeClaim row, routine batch, no-op
_K, _C, _B, _N = 0, 1, 2, 3


def _kinds(rows: pl.DataFrame) -> pl.DataFrame:
    """``pos``, ``time``, ``event``, ``claim``, ``nodepool``, ``batch`` and ``kind`` of every row."""
    c = pl.col
    event = c("event")
    routine = (
        (c("source") == "log")
        & event.is_in(ROUTINE_EVENTS)
        & c("error_code").is_null()
        & c("error_message").is_null()
        & c("category").is_null()
        & ~c("level").is_in(["ERROR", "WARN"]).fill_null(False)
        & ~_text("message").str.contains("Successfully assigned", literal=True).fill_null(False)
    ).fill_null(False)
    object_claim = ((c("object_kind") == "NodeClaim") & _nonempty("object_name").is_not_null()).fill_null(False)
    mentions = object_claim | pl.lit(_mentioned(rows))
    claim = _nonempty("nodeclaim")
    found = (event == "pods.found").fill_null(False)
    # the conditions once each as columns (a select does not share repeated sub-expressions)
    flags = rows.select(
        "time",
        event.alias("event"),
        claim.alias("claim"),
        _nonempty("nodepool").alias("nodepool"),
        routine.alias("_routine"),
        mentions.alias("_mentions"),
        found.alias("_found"),
        event.is_in(SUCCESS_EVENTS).fill_null(False).alias("_success"),
    )
    routine, mentions, found, unclaimed = c("_routine"), c("_mentions"), c("_found"), c("claim").is_null()
    kind = (
        pl.when(routine & ~unclaimed & ~found)
        .then(pl.lit(_C, pl.UInt8))
        .when(routine & unclaimed & ~mentions & found)
        .then(pl.lit(_B, pl.UInt8))
        .when(routine & unclaimed & ~mentions & ~c("_success"))
        .then(pl.lit(_N, pl.UInt8))
        .otherwise(pl.lit(_K, pl.UInt8))
    )
    return flags.select(
        "time",
        "event",
        "claim",
        "nodepool",
        (found.cum_sum().cast(pl.Int64) - 1).alias("batch"),
        kind.alias("kind"),
    ).with_row_index("pos")


def _mentioned(rows: pl.DataFrame) -> pl.Series:
    """Whether each row's ``_joined`` text names a NodeClaim (``_MENTION``); the joined text
    is built only for the few rows that keep their raw line."""
    mentioned = rows.select(_nonempty("message").str.contains(_MENTION).fill_null(False)).to_series()
    with_raw = rows.select(_nonempty("raw").is_not_null().arg_true()).to_series()
    if with_raw.len():
        texts = rows.select("message", "raw")[with_raw]
        mentioned = mentioned.scatter(with_raw, texts.select(_joined().str.contains(_MENTION).fill_null(False)).to_series())
    return mentioned


def _joined() -> pl.Expr:
    """Message and raw text as the walk searches them for a NodeClaim's name (most rows have no raw)."""
    raw, message = _nonempty("raw"), _nonempty("message")
    return pl.when(raw.is_not_null()).then(pl.concat_str([message, raw], separator=" ", ignore_nulls=True)).otherwise(message)


def split(rows: pl.DataFrame) -> tuple[pl.DataFrame, Summary]:
    """``rows``: the walk's rows in walk order (at least ``ROUTINE_COLUMNS``). Returns the rows
    to walk (same order, same columns) and the summary of the others."""
    walked, summary, finish = split_deferred(rows)
    finish()
    return walked, summary


def split_deferred(rows: pl.DataFrame) -> tuple[pl.DataFrame, Summary, Callable[[], None]]:
    """``split``, with the summary's ``pod_bound`` and ``nodepool_success`` left to ``finish()``:
    polars work that can run in another thread while the walk goes on."""
    c = pl.col
    summary = Summary()
    times = rows["time"].drop_nulls()
    if times.len():
        summary.first, summary.last = times.min(), times.max()  # type: ignore[assignment]
    summary.subscription = _subscription(rows)

    frame = _kinds(rows)
    kept_rows = rows.filter(frame["kind"] == _K)
    interest = _interest(kept_rows)

    # batch of each claim: its first "created" row after at least one batch
    assigned = (
        frame.filter(c("claim").is_not_null() & (c("event") == "nodeclaim.created") & (c("batch") >= 0))
        .group_by("claim")
        .agg(c("pos").min().alias("assigned_pos"), c("batch").sort_by("pos").first().alias("claim_batch"))
    )
    kept_created = frame.filter((c("kind") == _K) & (c("event") == "nodeclaim.created") & (c("batch") >= 0))
    interest_batches = pl.concat(
        [assigned.filter(c("claim").is_in(interest.implode()))["claim_batch"], kept_created["batch"]]
    ).unique()
    interest = pl.concat(
        [interest, assigned.filter(c("claim_batch").is_in(interest_batches.implode()))["claim"].cast(pl.Utf8)]
    ).unique()

    routine_claim = (c("kind") == _C) & ~c("claim").is_in(interest.implode()).fill_null(False)
    walked = (c("kind") == _K) | ((c("kind") == _C) & ~routine_claim)
    needed = frame.filter(walked)["batch"].unique()
    keep = walked | ((c("kind") == _B) & c("batch").is_in(needed.implode()))
    mask = frame.select(keep.alias("keep"))["keep"]

    dropped = frame.filter(routine_claim).drop("kind")
    walked_rows = rows.filter(mask)

    def finish() -> None:
        if dropped.height == 0:
            return
        summary.nodepool_success = _nodepool_success(dropped)
        named = pl.concat([walked_rows["pods"].explode().drop_nulls(), _nonnull_text(walked_rows["object_name"])])
        batches = pl.DataFrame(
            {
                "claim_batch": frame["batch"].filter(frame["event"] == "pods.found"),
                "pods": rows["pods"].filter(frame["event"] == "pods.found"),
            }
        )
        summary.pod_bound = _pod_bound(dropped, assigned, batches, named)

    return walked_rows, summary, finish


def _subscription(rows: pl.DataFrame) -> str:
    """The first subscription id in the rows' texts (raw line, else message); the texts are
    built only for the rows that name a subscription at all."""
    hint = "/subscriptions/"
    named = rows.select(
        (pl.col("raw").str.contains(hint, literal=True) | pl.col("message").str.contains(hint, literal=True))
        .fill_null(False)
        .arg_true()
    ).to_series()
    if named.len() == 0:
        return ""
    text = pl.when(_nonempty("raw").is_not_null()).then(_text("raw")).otherwise(_text("message"))
    found = rows.select("raw", "message")[named].select(text.str.extract(SUBSCRIPTION, 1).drop_nulls().first())
    return str(found.item() or "") if found.height else ""


def _nonnull_text(series: pl.Series) -> pl.Series:
    return series.cast(pl.Utf8).drop_nulls()


def _interest(kept: pl.DataFrame) -> pl.Series:
    """Every NodeClaim a kept row names, one way or another (a superset of what the walk finds)."""
    c = pl.col
    joined = _joined()
    names = kept.select(
        pl.concat_list(
            _nonempty("nodeclaim").cast(pl.Utf8),
            _text("object_name"),
            joined.str.extract_all(VM_NAME).list.eval(pl.element().str.strip_prefix("aks-")),
            joined.str.extract_all(CLAIM_WORD).list.eval(pl.element().str.extract(CLAIM_WORD, 1)),
            pl.when(c("event") == "k8s.Nominated").then(_text("message").str.extract(NOMINATED, 1)),
        ).alias("name")
    )
    return names.explode("name")["name"].drop_nulls().unique()


def _nodepool_success(dropped: pl.DataFrame) -> dict[str, pl.Series]:
    """Every success row: its own NodePool, else the first one its NodeClaim showed so far.
    The times stay a polars series (a busy log has millions; few are ever looked at)."""
    c = pl.col
    first = (
        dropped.filter(c("nodepool").is_not_null())
        .group_by("claim")
        .agg(c("nodepool").sort_by("pos").first().alias("claim_pool"), c("pos").min().alias("pool_pos"))
    )
    rows = (
        dropped.filter(c("event").is_in(SUCCESS_EVENTS) & c("time").is_not_null())
        .join(first, on="claim", how="left")
        .select(
            pl.coalesce(c("nodepool"), pl.when(c("pool_pos") <= c("pos")).then(c("claim_pool"))).alias("pool"),
            "time",
        )
        .drop_nulls("pool")
    )
    return {str(pool): part["time"] for (pool,), part in rows.group_by("pool")}


def _pod_bound(
    dropped: pl.DataFrame, assigned: pl.DataFrame, batches: pl.DataFrame, named: pl.Series
) -> dict[str, datetime]:
    """The pods each routine NodeClaim got a node for (its batch's, unless shared by then),
    of those ``named`` by a walked row: a finding's pods always come from such a row."""
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
    bound = (
        success.filter(c("claim").is_in(alone.implode()))
        .join(batches, on="claim_batch", how="inner")
        .select(c("pods").alias("pod"), "success_time")
        .explode("pod")
        .filter(c("pod").is_in(named.implode()))
        .group_by("pod")
        .agg(c("success_time").max())
    )
    return dict(bound.iter_rows())
