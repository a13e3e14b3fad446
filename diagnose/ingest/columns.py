"""From decoded JSON records to the normalised table: one set of polars expressions.

Every JSON record, whether the vectorised path decoded it straight from the file or the
per-line path recovered it (a prefixed, console-encoded, pretty-printed or repaired
line), goes through ``derive``. That is what makes both paths agree column for column.

Inputs: ``decoded`` (a frame with the columns of ``vocabulary.DECODE_SCHEMA``) and
``meta`` (same height): ``line``, ``raw`` (the original text), ``keep_raw`` (bool),
``prefix_time`` (a ``kubectl logs --timestamps`` time, used when the record has none),
``status`` (parse_status) and ``shape`` (set when the reader knows the shape, else null).
Error texts are analysed in Python once per distinct text (``error_text.analyse``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import polars as pl

from diagnose.ingest.error_text import analyse
from diagnose.ingest.vocabulary import event_expr
from diagnose.schema import SCHEMA, UNPARSED
from provisioner.model.quantity import QuantityError, parse_count, parse_cpu, parse_memory

__all__ = ["META_SCHEMA", "constant", "derive", "materialized", "unparsed_frame"]

META_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "line": pl.Int64,
    "raw": pl.Utf8,
    "keep_raw": pl.Boolean,
    "prefix_time": pl.Utf8,
    "status": pl.Utf8,
    "shape": pl.Utf8,
}

_OTHERS = r" and (\d+) other\(s\)$"
_RFC3339 = "%+"  # "2024-08-04T21:03:40.226Z", "…+02:00": one parse for both (other spellings: _odd_times)
# the instance type a message names: at its start, or after "for instance type" (two patterns:
# the unanchored one alone can skip ahead to its literal, which makes it several times faster)
_INSTANCE_AT_START = r"^(?:[Ss]elected instance type |[Cc]reating virtual machine \S+ \()([A-Za-z][A-Za-z0-9_-]*)"
_INSTANCE_AFTER = r"for instance type ([A-Za-z][A-Za-z0-9_-]*)"
_PROBLEM_LEVELS = ["ERROR", "WARN", "DPANIC", "PANIC", "FATAL"]
_QUOTA_CATEGORY = {"regional": "regional-vcpu-quota", "family": "family-vcpu-quota", "spot": "spot-vcpu-quota"}
_FACT_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "_text": pl.Utf8,
    "_code": pl.Utf8,
    "_emsg": pl.Utf8,
    "_cat": pl.Utf8,
    "_qscope": pl.Utf8,
    "_qname": pl.Utf8,
    "_qlimit": pl.Int64,
    "_qusage": pl.Int64,
    "_qrequired": pl.Int64,
    "_qnew": pl.Int64,
    "_region": pl.Utf8,
}


def constant(value: object, n: int, dtype: pl.DataType | type[pl.DataType], name: str = "") -> pl.Series:
    """A plain series of ``n`` copies of ``value`` (``pl.repeat`` would plan and run a query:
    about 50 µs, which adds up over the dozens of columns of every block)."""
    return pl.Series(name, [value], dtype=dtype).new_from_index(0, n)


def _time(text: pl.Expr) -> pl.Expr:
    return text.str.to_datetime(_RFC3339, time_unit="us", strict=False).dt.convert_time_zone("UTC")


def _listed(text: pl.Expr) -> list[pl.Expr]:
    """The pieces of a pod list's text that ``_name_list`` and ``_count`` read, computed
    once as columns: ``_lt`` the text, ``_others`` N of its "and N other(s)", ``_number``
    whether it is a bare number, ``_body`` the text without the "others" suffix."""
    others = text.str.extract(_OTHERS, 1)
    suffix = others.str.len_chars().cast(pl.Int64) + len(" and ") + len(" other(s)")
    return [
        text.alias("_lt"),
        others.alias("_others"),
        text.str.contains(r"^\d+$").alias("_number"),
        pl.coalesce(text.str.head(-suffix), text).alias("_body"),
    ]


def _name_list() -> pl.Expr:
    """'a, b and 5 other(s)' or '["a", "b"]' -> ['a', 'b']; a bare number -> null (on ``_listed``)."""
    body = pl.col("_body")
    array = body.str.strip_chars("[]").str.replace_all('"', "", literal=True)
    return (
        pl.when(pl.col("_number") | (body.str.strip_chars() == "") | (body == "[]"))
        .then(None)
        .when(pl.col("_lt").str.starts_with("["))
        .then(array.str.split(", "))
        .otherwise(body.str.split(", "))
    )


def _count() -> pl.Expr:
    """Names listed plus 'and N other(s)'; a bare number is the count itself (on ``_listed``)."""
    body = pl.col("_body")
    listed = pl.when(body.str.strip_chars("[] ") == "").then(0).otherwise(body.str.count_matches(",", literal=True) + 1)
    return (
        pl.when(pl.col("_number"))
        .then(pl.col("_lt").cast(pl.Int64, strict=False))
        .otherwise(listed + pl.col("_others").cast(pl.Int64).fill_null(0))
    )


def _per_distinct(df: pl.DataFrame, key: str, exprs: list[pl.Expr], helpers: list[pl.Expr] | None = None) -> pl.DataFrame:
    """``df`` with the columns ``exprs`` (on ``key``, and on the ``helpers`` columns) added,
    each computed once per distinct value of ``key`` and joined onto every row (null where
    ``key`` is null). A join: ``replace_strict`` with a mapping of thousands of texts is
    several times slower."""
    distinct = df.select(pl.col(key).drop_nulls().unique())
    if helpers:
        distinct = distinct.with_columns(helpers)
    return df.join(distinct.select(key, *exprs), on=key, how="left", maintain_order="left")


def _object_name(field: str) -> pl.Expr:
    return pl.col(field).struct.field("name")


def _quantities(values: pl.Series, parse: object) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for value in values.drop_nulls().unique().to_list():
        try:
            out[value] = parse(value)  # type: ignore[operator]
        except (QuantityError, ValueError):
            out[value] = None
    return out


def _facts(texts: pl.Series) -> pl.DataFrame:
    rows = []
    for text in texts.drop_nulls().unique().to_list():
        f = analyse(text)
        rows.append(
            (text, f.code, f.message, f.category, f.quota_scope, f.quota_name, f.quota_limit, f.quota_usage,
             f.quota_required, f.quota_new_limit, f.region)
        )
    return pl.DataFrame(rows, schema=_FACT_SCHEMA, orient="row")


def derive(
    decoded: pl.DataFrame,
    meta: pl.DataFrame,
    file: str,
    lean: Callable[[pl.DataFrame], pl.DataFrame] | None = None,
) -> pl.DataFrame:
    """The SCHEMA rows (plus nothing else) of these decoded records; through ``lean`` (the
    lean ingest's cut, which also types and copies the columns) instead of ``_compact`` when given."""
    pods_text = pl.coalesce(pl.col("Pods"), pl.col("pods"))
    c = pl.col
    message = pl.coalesce(c("message"), c("msg"))
    df = pl.concat([meta, decoded], how="horizontal").with_columns(*_listed(pods_text), message.alias("_m"))
    # columns read from a message, a level or a list of instance types: computed once per
    # distinct value (most repeat)
    instance = pl.coalesce(c("_m").str.extract(_INSTANCE_AT_START, 1), c("_m").str.extract(_INSTANCE_AFTER, 1))
    df = _per_distinct(df, "_m", [event_expr(c("_m")).alias("_m_event"), instance.alias("_m_instance")])
    df = _per_distinct(
        df, "level", [c("level").str.to_uppercase().replace({"WARNING": "WARN", "ERR": "ERROR"}).alias("_level")]
    )
    df = _per_distinct(df, "instance-types", [_count().alias("_itc")], _listed(c("instance-types")))
    time = pl.coalesce(
        _time(c("time")),
        (c("ts") * 1_000_000).cast(pl.Int64).cast(pl.Datetime("us", "UTC")),
        _time(c("prefix_time")),
    )
    pod_obj = c("Pod").struct
    single = pl.coalesce(
        c("pod"),
        pl.when(pod_obj.field("namespace").fill_null("") != "")
        .then(pl.concat_str([pod_obj.field("namespace"), pl.lit("/"), pod_obj.field("name")]))
        .otherwise(pod_obj.field("name")),
    )
    names = _name_list()
    pods = (
        pl.when(single.is_not_null() & names.is_not_null())
        .then(pl.concat_list([single, names]))
        .when(single.is_not_null())
        .then(pl.concat_list([single]))
        .otherwise(names)
    )
    listed_count = pl.when(c("_lt").is_not_null()).then(_count()).otherwise(0)
    pod_count = (
        pl.when(c("_lt").is_null() & single.is_null())
        .then(None)
        .otherwise(listed_count + single.is_not_null().cast(pl.Int64))
    )
    kind = c("controllerKind")
    shape = pl.coalesce(
        c("shape"),
        pl.when(c("event").is_not_null() & message.is_not_null()).then(pl.lit("karp"))
        .when(c("ts").is_not_null() | c("msg").is_not_null()).then(pl.lit("fallback"))
        .when((c("logger") == "controller") | c("controller").is_not_null()).then(pl.lit("v1"))
        .when(message.is_not_null()).then(pl.lit("alpha"))
        .otherwise(pl.lit("json")),
    )
    requests = c("requests").struct
    out = df.select(
        pl.lit(file, pl.Utf8).alias("file"),
        c("line"),
        pl.lit("log").alias("source"),
        c("status").alias("parse_status"),
        shape.alias("shape"),
        time.alias("time"),
        c("_level").alias("level"),
        pl.coalesce(c("controller"), c("logger").str.strip_prefix("controller.")).alias("component"),
        message.alias("message"),
        pl.coalesce(c("event"), c("_m_event")).alias("event"),
        pods.alias("pods"),
        pod_count.alias("pod_count"),
        pl.coalesce(c("nodepool"), _object_name("NodePool"), c("provisioner"),
                    pl.when(kind == "NodePool").then(c("name"))).alias("nodepool"),
        pl.coalesce(c("nodeclaim"), _object_name("NodeClaim"), c("machine"), _object_name("Machine"),
                    pl.when(kind == "NodeClaim").then(c("name"))).alias("nodeclaim"),
        pl.coalesce(c("node"), _object_name("Node"), pl.when(kind == "Node").then(c("name"))).alias("node"),
        pl.coalesce(c("instance-type"), c("instanceType"), c("_m_instance")).alias(
            "instance_type"
        ),
        c("_itc").alias("instance_types_count"),
        c("zone"),
        pl.coalesce(c("capacity-type"), c("capacityType")).alias("capacity_type"),
        requests.field("cpu").alias("_cpu"),
        requests.field("memory").alias("_memory"),
        requests.field("pods").alias("_rpods"),
        c("error").alias("_error"),
        c("error.code").alias("_ecode"),
        c("quota"),
        pl.coalesce(c("region"), c("location")).alias("_region0"),
        c("raw"),
        c("keep_raw"),
        c("time").alias("_time_text"),
    )
    out = _requests(_odd_times(out))
    problem = (
        c("_error").is_not_null() | c("level").is_in(_PROBLEM_LEVELS) | c("_ecode").is_not_null() | c("quota").is_not_null()
    )
    rows = out.with_row_index("_row").filter(problem) if out.height else out.clear()
    if rows.height:
        errors = _errors(rows)
        scattered = {
            name: constant(None, out.height, dtype, name).scatter(rows["_row"], errors[name])
            for name, dtype in _ERROR_COLUMNS.items()
        }
        out = out.with_columns(
            constant(None, out.height, pl.Utf8, "_keep").scatter(rows["_row"], rows["raw"]),
            *scattered.values(),
        ).with_columns(pl.coalesce(pl.col("_keep"), pl.when(pl.col("keep_raw")).then(pl.col("raw"))).alias("raw"))
    else:
        out = out.with_columns(
            *(pl.lit(None, dtype).alias(name) for name, dtype in _ERROR_COLUMNS.items() if name != "region"),
            pl.col("_region0").alias("region"),
            pl.when(pl.col("keep_raw")).then(pl.col("raw")).alias("raw"),
        )
    out = out.with_columns(pl.lit(None, pl.Utf8).alias(k) for k in ("reason", "object_kind", "object_name"))
    return materialized(lean(out)) if lean is not None else _compact(out)


_ERROR_COLUMNS: dict[str, pl.DataType | type[pl.DataType]] = {
    name: SCHEMA[name]
    for name in (
        "error_code", "error_message", "category", "quota_scope", "quota_name", "quota_limit", "quota_usage",
        "quota_required", "quota_new_limit", "region",
    )
}


def _compact(frame: pl.DataFrame) -> pl.DataFrame:
    """SCHEMA columns, lean.

    polars strings are views into shared buffers: raw lines taken from a block would keep
    the block's whole text alive, so they are copied out."""
    if frame.height == 0:
        return pl.DataFrame(schema=SCHEMA)
    return materialized(
        frame.with_columns(pl.concat_str([pl.col("raw"), pl.lit("")]).alias("raw")).select(
            pl.col(name).cast(dtype) for name, dtype in SCHEMA.items()
        )
    )


def materialized(frame: pl.DataFrame) -> pl.DataFrame:
    """The SCHEMA columns as plain one-chunk series.

    A constant column would stay a scalar: then every later select or drop on the
    concatenated table would realign, that is copy, all its columns. A column without a
    value is a null series, which costs (almost) no memory until written."""
    columns = []
    for name in SCHEMA:
        column = frame.get_column(name)
        if column.null_count() == frame.height:
            column = constant(None, frame.height, column.dtype, name)
        columns.append(column.rechunk() if column.n_chunks() > 1 else column)
    return pl.DataFrame(columns)


def unparsed_frame(rows: list[tuple[int, str]], file: str) -> pl.DataFrame:
    """SCHEMA rows for lines no reader understood: file, line, text, parse_status "unparsed"."""
    given = {
        "file": pl.lit(file, pl.Utf8),
        "source": pl.lit("log", pl.Utf8),
        "parse_status": pl.lit(UNPARSED, pl.Utf8),
        "shape": pl.lit("text", pl.Utf8),
    }
    base = pl.DataFrame(
        {"line": [line for line, _ in rows], "raw": [text for _, text in rows]},
        schema={"line": pl.Int64, "raw": pl.Utf8},
    )
    return base.select(
        pl.col(k) if k in ("line", "raw") else given.get(k, pl.lit(None, v)).alias(k) for k, v in SCHEMA.items()
    )


def _odd_time(text: str) -> datetime | None:
    try:
        return datetime.fromtimestamp(float(text), UTC)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _odd_times(out: pl.DataFrame) -> pl.DataFrame:
    """Times in other spellings (a space for T, epoch numbers in "time"), read one distinct value at a time."""
    odd = out.filter(pl.col("time").is_null() & pl.col("_time_text").is_not_null())["_time_text"]
    if odd.len() == 0:
        return out
    mapping = {text: _odd_time(text) for text in odd.unique().to_list()}
    fixed = pl.col("_time_text").replace_strict(mapping, default=None, return_dtype=pl.Datetime("us", "UTC"))
    return out.with_columns(pl.coalesce(pl.col("time"), fixed).alias("time"))


_REQUESTS = (("_cpu", parse_cpu, "requests_cpu_m"), ("_memory", parse_memory, "requests_memory"),
             ("_rpods", parse_count, "requests_pods"))  # fmt: skip


def _requests(out: pl.DataFrame) -> pl.DataFrame:
    """The requested quantities as numbers, each distinct text parsed once."""
    for column, parse, name in _REQUESTS:
        values = _quantities(out[column], parse)
        table = pl.DataFrame([list(values), list(values.values())], schema={column: pl.Utf8, name: pl.Int64}, orient="col")
        out = out.join(table, on=column, how="left", maintain_order="left")
    return out


def _errors(rows: pl.DataFrame) -> pl.DataFrame:
    """The error columns of the rows that carry an error or a warning, in their order."""
    c = pl.col
    text = pl.coalesce(c("_error"), c("message"))
    rows = rows.with_columns(text.alias("_text"))
    rows = rows.join(_facts(rows["_text"]), on="_text", how="left", maintain_order="left")
    q = c("quota").struct
    return rows.select(
        pl.coalesce(c("_ecode"), c("_code")).alias("error_code"),
        pl.when(c("_error").is_not_null() | c("_code").is_not_null() | (c("level") == "ERROR"))
        .then(c("_emsg"))
        .alias("error_message"),
        pl.coalesce(q.field("scope").replace_strict(_QUOTA_CATEGORY, default=None), c("_cat")).alias("category"),
        pl.coalesce(q.field("scope"), c("_qscope")).alias("quota_scope"),
        pl.coalesce(q.field("name"), c("_qname")).alias("quota_name"),
        pl.coalesce(q.field("limit"), c("_qlimit")).alias("quota_limit"),
        pl.coalesce(q.field("usage"), c("_qusage")).alias("quota_usage"),
        pl.coalesce(q.field("required"), c("_qrequired")).alias("quota_required"),
        pl.coalesce(q.field("newLimit"), c("_qnew")).alias("quota_new_limit"),
        pl.coalesce(q.field("region"), c("_region"), c("_region0")).alias("region"),
    )
