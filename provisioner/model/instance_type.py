"""Azure VM sizes as instance types.

An Azure size name reads ``Standard_<family><subfamily?><vcpus><-constrained?><features>[_<accel>][_v<version>]``,
for example ``Standard_D16ls_v5``: family ``D``, 16 vCPUs, features ``l`` (less memory) and
``s`` (premium storage), version 5. The usage and quota APIs count vCPUs per *quota family*,
named like ``standardDLSv5Family``. Names of older sizes do not carry their vCPU count
(``Standard_D14_v2`` has 16), so figures come from the catalog; the name parser only gives
the parts that the name really encodes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = [
    "CAPACITY_TYPES",
    "InstanceType",
    "Offering",
    "SkuName",
    "parse_sku_name",
    "quota_family_name",
]

CAPACITY_TYPES = ("on-demand", "spot")

_SKU = re.compile(
    r"^(?:Standard|Basic)_"
    r"(?P<family>[A-Z]+)"
    r"(?P<size>\d+)"
    r"(?:-(?P<constrained>\d+))?"
    r"(?P<features>[a-z]*)"
    r"(?:_(?P<accel>[A-Z][A-Za-z0-9]*))?"
    r"(?:_[vV](?P<version>\d+))?"
    r"(?:_(?P<suffix>[A-Za-z0-9_]+))?$"
)


@dataclass(frozen=True, slots=True)
class SkuName:
    """The parts an Azure size name encodes."""

    name: str
    family: str  # "D", "E", "F", "B", "DS", "NC" ...: the letters before the number
    size_number: int  # the number in the name (vCPUs for current generations)
    features: str  # additive feature letters: "ls", "as", "ads", "s", ...
    version: int  # 1 when the name carries no _vN
    accelerator: str = ""

    @property
    def series(self) -> str:
        """Series as Karpenter's Azure provider labels it (``Dls_v5``, ``Ds_v5``, ``D_v2``)."""
        return f"{self.family}{self.features}_v{self.version}"

    @property
    def family_letter(self) -> str:
        """The SKU family of ``karpenter.azure.com/sku-family``: ``D`` for DS, Ds, Dls, ..."""
        return self.family[0]


def parse_sku_name(name: str) -> SkuName | None:
    """Parse an Azure VM size name; None when it does not look like one."""
    match = _SKU.match(name.strip())
    if not match:
        return None
    return SkuName(
        name=name.strip(),
        family=match["family"],
        size_number=int(match["size"]),
        features=match["features"] or "",
        version=int(match["version"]) if match["version"] else 1,
        accelerator=match["accel"] or "",
    )


def quota_family_name(name: str) -> str | None:
    """The usage-API quota family a size counts against, derived from its name.

    ``Standard_D16ls_v5`` -> ``standardDLSv5Family``, ``Standard_D14_v2`` -> ``standardDv2Family``,
    ``Standard_B2ms`` -> ``standardBSFamily``. The catalog's own ``family`` wins when known; this
    is the fallback for sizes the catalog does not list.
    """
    sku = parse_sku_name(name)
    if sku is None:
        return None
    if sku.family == "B" and sku.version == 1:
        return "standardBSFamily"
    if sku.family == "B":  # Standard_B2ats_v2 -> standardBasv2Family, B2pls_v2 -> standardBpsv2Family
        letters = sku.features.replace("l", "").replace("t", "")
        return f"standardB{letters}v{sku.version}Family"
    if sku.version >= 6:
        # v6 names keep lower-case letters: StandardDsv6Family, StandardFalsv6Family; AMD D/E
        # drop the "s" and start lower-case: Standard_D16als_v6 -> standardDalv6Family.
        if sku.family in ("D", "E") and sku.features.startswith("a"):
            return f"standard{sku.family}{sku.features.replace('s', '')}v{sku.version}Family"
        return f"Standard{sku.family}{sku.features}v{sku.version}Family"
    features = sku.features.replace("m", "").replace("t", "").upper()
    version = f"v{sku.version}" if sku.version > 1 else ""
    return f"standard{sku.family}{features}{version}Family"


@dataclass(frozen=True, slots=True)
class Offering:
    """Where and how a size can be bought: capacity type, zone ("" for regional) and price."""

    capacity_type: str
    zone: str
    price_per_hour: float
    available: bool = True


@dataclass(frozen=True, slots=True)
class InstanceType:
    """One VM size in one region, with the figures the planner and diagnose need."""

    name: str
    vcpus: int
    memory_mib: int
    family: str  # quota family as the usage API names it, e.g. "standardDLSv5Family"
    region: str = ""
    zones: tuple[str, ...] = ()
    price_on_demand: float = 0.0
    price_spot: float | None = None
    max_pods: int = 250
    arch: str = "amd64"
    accelerated_networking: bool = True
    premium_storage: bool = True
    gpu_count: int = 0
    restricted_zones: tuple[str, ...] = ()
    not_available: bool = False  # restricted for the subscription in this location
    offerings: tuple[Offering, ...] = field(default=(), compare=False)

    @property
    def sku(self) -> SkuName | None:
        return parse_sku_name(self.name)

    @property
    def sku_family(self) -> str:
        """``karpenter.azure.com/sku-family``: ``D`` for every D-series size."""
        sku = self.sku
        return sku.family_letter if sku else ""

    @property
    def series(self) -> str:
        sku = self.sku
        return sku.series if sku else ""

    @property
    def version(self) -> int:
        sku = self.sku
        return sku.version if sku else 1

    @property
    def memory_bytes(self) -> int:
        return self.memory_mib * 2**20

    @property
    def millicores(self) -> int:
        return self.vcpus * 1000

    def price(self, capacity_type: str) -> float | None:
        """Hourly price for a capacity type, None when it cannot be bought that way."""
        if capacity_type == "spot":
            return self.price_spot
        return self.price_on_demand

    def labels(self) -> dict[str, str]:
        """The ``karpenter.azure.com/sku-*`` and well-known labels a node of this size carries."""
        sku = self.sku
        labels = {
            "node.kubernetes.io/instance-type": self.name,
            "kubernetes.io/arch": self.arch,
            "kubernetes.io/os": "linux",
            "karpenter.azure.com/sku-name": self.name,
            "karpenter.azure.com/sku-family": self.sku_family,
            "karpenter.azure.com/sku-cpu": str(self.vcpus),
            "karpenter.azure.com/sku-memory": str(self.memory_mib),
            "karpenter.azure.com/sku-networking-accelerated": str(self.accelerated_networking).lower(),
            "karpenter.azure.com/sku-storage-premium-capable": str(self.premium_storage).lower(),
        }
        if sku is not None:
            labels["karpenter.azure.com/sku-series"] = sku.series
            labels["karpenter.azure.com/sku-version"] = str(sku.version)
        if self.gpu_count:
            labels["karpenter.azure.com/sku-gpu-count"] = str(self.gpu_count)
        return labels
