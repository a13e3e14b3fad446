"""Kubernetes resource quantities as integers in base units.

CPU is held in millicores, memory and storage in bytes, counts as plain integers.
Parsing happens once, at the edge; the rest of the code only sees integers.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

__all__ = [
    "QuantityError",
    "format_cpu",
    "format_memory",
    "parse_count",
    "parse_cpu",
    "parse_memory",
]


class QuantityError(ValueError):
    """A quantity string that Kubernetes would not accept."""


_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal(10**3),
    "M": Decimal(10**6),
    "G": Decimal(10**9),
    "T": Decimal(10**12),
    "P": Decimal(10**15),
    "E": Decimal(10**18),
}
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$")


def _to_decimal(value: str | int | float) -> Decimal:
    if isinstance(value, bool):
        raise QuantityError(f"invalid quantity {value!r}")
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value))
    text = value.strip()
    match = _QUANTITY.match(text)
    if not match:
        raise QuantityError(f"invalid quantity {value!r}")
    number, exponent, suffix = match.groups()
    try:
        base = Decimal(number)
    except InvalidOperation as e:  # pragma: no cover - the regex already guards it
        raise QuantityError(f"invalid quantity {value!r}") from e
    if exponent:
        return base * (Decimal(10) ** int(exponent[1:]))
    if suffix in _BINARY:
        return base * _BINARY[suffix]
    return base * _DECIMAL[suffix or ""]


def _ceil(value: Decimal) -> int:
    integral = int(value)
    return integral + 1 if value > integral else integral


def parse_cpu(value: str | int | float) -> int:
    """'250m' -> 250, '1' -> 1000, '0.5' -> 500, 2 -> 2000 (millicores, rounded up)."""
    amount = _to_decimal(value)
    if amount < 0:
        raise QuantityError(f"negative cpu quantity {value!r}")
    return _ceil(amount * 1000)


def parse_memory(value: str | int | float) -> int:
    """'256M' -> 256000000, '2981280Ki' -> bytes, '1Gi' -> 1073741824 (bytes, rounded up)."""
    amount = _to_decimal(value)
    if amount < 0:
        raise QuantityError(f"negative memory quantity {value!r}")
    return _ceil(amount)


def parse_count(value: str | int | float) -> int:
    """A plain count such as the 'pods' resource: '15' -> 15."""
    amount = _to_decimal(value)
    if amount < 0:
        raise QuantityError(f"negative count {value!r}")
    return _ceil(amount)


def format_cpu(millicores: int) -> str:
    """1000 -> '1', 10250 -> '10250m' (Kubernetes' canonical form)."""
    return str(millicores // 1000) if millicores % 1000 == 0 else f"{millicores}m"


def format_memory(num_bytes: int) -> str:
    """Largest binary suffix that divides exactly: 2981280*1024 -> '2981280Ki'."""
    for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
        unit = _BINARY[suffix]
        if num_bytes and num_bytes % unit == 0:
            return f"{num_bytes // unit}{suffix}"
    return str(num_bytes)
