#!/usr/bin/env python3
"""Generate the bundled VM-size snapshots fixtures/skus/<region>.json.

The facts live in the SERIES table below: for each Azure VM series, its sizes (vCPUs and
memory as Azure publishes them), the usage-API quota family, the Linux pay-as-you-go price
per vCPU in westus2, the spot discount, the temporary-disk size and the capabilities the
resource-SKU API reports. Each output entry has the ARM resource-SKU shape
(``resourceType``, ``name``, ``tier``, ``size``, ``family``, ``locations``, ``locationInfo``,
``capabilities``, ``restrictions``) plus a ``prices`` object ``{"onDemand": x, "spot": y}``,
so the ARM emulator can serve the list as is and the catalog can read prices from it.

The output is deterministic: running the script twice writes byte-identical files.

    python scripts/gen_catalog.py                 # writes fixtures/skus/westus2.json and eastus.json
    python scripts/gen_catalog.py --out /tmp/skus  # somewhere else
    python scripts/gen_catalog.py --check          # exit 1 when the committed files are stale
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

READ_AT = "2026-11-29T00:00:00Z"
ALL_ZONES = ("1", "2", "3")


@dataclass(frozen=True)
class Series:
    """One VM series: how to name its sizes and what every size of it shares."""

    key: str  # e.g. "Dlsv5"
    template: str  # size name with {n} for the vCPU count, e.g. "Standard_D{n}ls_v5"
    sizes: tuple[tuple[int, float], ...]  # (vCPUs, memory GiB)
    family: str  # usage-API quota family
    price_per_vcpu: float  # westus2 Linux on-demand $/h per vCPU
    spot_ratio: float | None  # spot price as a fraction of on-demand; None: no spot
    temp_disk_mb_per_vcpu: int = 0  # MaxResourceVolumeMB per vCPU; 0: no temporary disk
    arch: str = "x64"
    premium_io: bool = True
    hyperv: str = "V1,V2"
    vcpus_per_core: int = 2
    names: tuple[str, ...] = ()  # explicit names (older series whose names skip the vCPU count)
    prices: tuple[float, ...] = ()  # explicit on-demand prices, parallel to sizes
    temp_disks: tuple[int, ...] = ()  # explicit MaxResourceVolumeMB, parallel to sizes


def ratio(vcpus: tuple[int, ...], gib_per_vcpu: float, **overrides: float) -> tuple[tuple[int, float], ...]:
    """Sizes whose memory is a fixed ratio of the vCPUs, with per-size exceptions ("64": 432)."""
    return tuple((n, overrides.get(f"m{n}", n * gib_per_vcpu)) for n in vcpus)


V3 = (2, 4, 8, 16, 32, 48, 64)
V4A = (2, 4, 8, 16, 32, 48, 64, 96)
V5 = (2, 4, 8, 16, 32, 48, 64, 96)
V6_INTEL = (2, 4, 8, 16, 32, 48, 64, 96, 128, 192)
V6_AMD = (2, 4, 8, 16, 32, 48, 64, 96)
E_V3 = (2, 4, 8, 16, 20, 32, 48, 64)
E_V5 = (2, 4, 8, 16, 20, 32, 48, 64, 96, 104)
E_AV5 = (2, 4, 8, 16, 20, 32, 48, 64, 96)

DV2_NAMES = ("D1", "D2", "D3", "D4", "D5", "D11", "D12", "D13", "D14", "D15")
DV2_SIZES = ((1, 3.5), (2, 7), (4, 14), (8, 28), (16, 56), (2, 14), (4, 28), (8, 56), (16, 112), (20, 140))
DV2_PRICES = (0.073, 0.146, 0.293, 0.585, 1.17, 0.185, 0.371, 0.741, 1.482, 1.853)

B_NAMES = ("B1ls", "B1s", "B1ms", "B2s", "B2ms", "B4ms", "B8ms", "B12ms", "B16ms", "B20ms")
B_SIZES = ((1, 0.5), (1, 1), (1, 2), (2, 4), (2, 8), (4, 16), (8, 32), (12, 48), (16, 64), (20, 80))
B_PRICES = (0.0052, 0.0104, 0.0207, 0.0416, 0.0832, 0.166, 0.333, 0.499, 0.666, 0.832)
B_TEMP = (4096, 4096, 4096, 8192, 16384, 32768, 65536, 98304, 131072, 163840)

BV2_SHAPES = (("2t", 2, 1), ("2l", 2, 4), ("2", 2, 8), ("4l", 4, 8), ("4", 4, 16), ("8l", 8, 16),
              ("8", 8, 32), ("16l", 16, 32), ("16", 16, 64), ("32l", 32, 64), ("32", 32, 128))


def bv2(prefix: str, letter: str, family: str, per_gib: float, arch: str = "x64", largest: int = 32) -> Series:
    """Bsv2, Basv2, Bpsv2: names like B2ats_v2; price follows memory ($/GiB-hour)."""
    shapes = [s for s in BV2_SHAPES if s[1] <= largest]
    names = []
    for code, n, _mem in shapes:
        extra = code[len(str(n)):]  # "t", "l" or ""
        names.append(f"B{n}{letter}{extra}s_v2")
    return Series(
        key=prefix,
        template="",
        sizes=tuple((n, float(mem)) for _c, n, mem in shapes),
        family=family,
        price_per_vcpu=0.0,
        spot_ratio=None,  # no B-series size can run as spot
        arch=arch,
        hyperv="V2" if arch == "Arm64" else "V1,V2",
        vcpus_per_core=1 if arch == "Arm64" else 2,
        names=tuple(names),
        prices=tuple(round(mem * per_gib, 4) for _c, _n, mem in shapes),
    )


SERIES: tuple[Series, ...] = (
    # D: general purpose
    Series("Dv2", "", DV2_SIZES, "standardDv2Family", 0.0, 0.12, premium_io=False, hyperv="V1",
           vcpus_per_core=1, names=tuple(f"{n}_v2" for n in DV2_NAMES), prices=DV2_PRICES,
           temp_disks=(51200, 102400, 204800, 409600, 819200, 102400, 204800, 409600, 819200, 1024000)),
    Series("DSv2", "", DV2_SIZES, "standardDSv2Family", 0.0, 0.12, hyperv="V1,V2", vcpus_per_core=1,
           names=tuple(f"DS{n[1:]}_v2" for n in DV2_NAMES), prices=DV2_PRICES,
           temp_disks=(7168, 14336, 28672, 57344, 114688, 28672, 57344, 114688, 229376, 286720)),
    Series("Dv3", "Standard_D{n}_v3", ratio(V3, 4), "standardDv3Family", 0.048, 0.13, 25600,
           premium_io=False, hyperv="V1"),
    Series("Dsv3", "Standard_D{n}s_v3", ratio(V3, 4), "standardDSv3Family", 0.048, 0.13, 8192),
    Series("Dv4", "Standard_D{n}_v4", ratio(V3, 4), "standardDv4Family", 0.048, 0.14, premium_io=False),
    Series("Dsv4", "Standard_D{n}s_v4", ratio(V3, 4), "standardDSv4Family", 0.048, 0.14),
    Series("Dav4", "Standard_D{n}a_v4", ratio(V4A, 4), "standardDAv4Family", 0.048, 0.13, 25600,
           premium_io=False),
    Series("Dasv4", "Standard_D{n}as_v4", ratio(V4A, 4), "standardDASv4Family", 0.048, 0.13, 8192),
    Series("Ddv4", "Standard_D{n}d_v4", ratio(V3, 4), "standardDDv4Family", 0.0565, 0.14, 38400,
           premium_io=False),
    Series("Ddsv4", "Standard_D{n}ds_v4", ratio(V3, 4), "standardDDSv4Family", 0.0565, 0.14, 38400),
    Series("Dv5", "Standard_D{n}_v5", ratio(V5, 4), "standardDv5Family", 0.048, 0.15, premium_io=False),
    Series("Dsv5", "Standard_D{n}s_v5", ratio(V5, 4), "standardDSv5Family", 0.048, 0.15),
    Series("Ddv5", "Standard_D{n}d_v5", ratio(V5, 4), "standardDDv5Family", 0.0565, 0.15, 38400,
           premium_io=False),
    Series("Ddsv5", "Standard_D{n}ds_v5", ratio(V5, 4), "standardDDSv5Family", 0.0565, 0.15, 38400),
    Series("Dasv5", "Standard_D{n}as_v5", ratio(V5, 4), "standardDASv5Family", 0.043, 0.16),
    Series("Dadsv5", "Standard_D{n}ads_v5", ratio(V5, 4), "standardDADSv5Family", 0.0515, 0.16, 38400),
    Series("Dlsv5", "Standard_D{n}ls_v5", ratio(V5, 2), "standardDLSv5Family", 0.0425, 0.15),
    Series("Dldsv5", "Standard_D{n}lds_v5", ratio(V5, 2), "standardDLDSv5Family", 0.0505, 0.15, 38400),
    Series("Dpsv5", "Standard_D{n}ps_v5", ratio(V3, 4, m64=208), "standardDPSv5Family", 0.0385, 0.17,
           arch="Arm64", hyperv="V2", vcpus_per_core=1),
    Series("Dsv6", "Standard_D{n}s_v6", ratio(V6_INTEL, 4), "StandardDsv6Family", 0.0505, 0.18, hyperv="V2"),
    Series("Ddsv6", "Standard_D{n}ds_v6", ratio(V6_INTEL, 4), "StandardDdsv6Family", 0.0595, 0.18,
           hyperv="V2"),
    Series("Dlsv6", "Standard_D{n}ls_v6", ratio(V6_INTEL[:-1], 2), "StandardDlsv6Family", 0.0445, 0.18,
           hyperv="V2"),
    Series("Dasv6", "Standard_D{n}as_v6", ratio(V6_AMD, 4), "standardDav6Family", 0.0452, 0.18, hyperv="V2"),
    Series("Dalsv6", "Standard_D{n}als_v6", ratio(V6_AMD, 2), "standardDalv6Family", 0.0434, 0.18,
           hyperv="V2"),
    # E: memory optimised
    Series("Ev3", "Standard_E{n}_v3", ratio(E_V3, 8, m64=432), "standardEv3Family", 0.063, 0.13, 25600,
           premium_io=False, hyperv="V1"),
    Series("Esv3", "Standard_E{n}s_v3", ratio(E_V3, 8, m64=432), "standardESv3Family", 0.063, 0.13, 16384),
    Series("Ev4", "Standard_E{n}_v4", ratio(E_V3, 8, m64=504), "standardEv4Family", 0.063, 0.14,
           premium_io=False),
    Series("Esv4", "Standard_E{n}s_v4", ratio(E_V3, 8, m64=504), "standardESv4Family", 0.063, 0.14),
    Series("Edsv4", "Standard_E{n}ds_v4", ratio(E_V3, 8, m64=504), "standardEDSv4Family", 0.072, 0.14, 38400),
    Series("Ev5", "Standard_E{n}_v5", ratio(E_V5, 8, m64=512, m96=672, m104=672), "standardEv5Family",
           0.063, 0.15, premium_io=False),
    Series("Esv5", "Standard_E{n}s_v5", ratio(E_V5, 8, m64=512, m96=672, m104=672), "standardESv5Family",
           0.063, 0.15),
    Series("Edsv5", "Standard_E{n}ds_v5", ratio(E_V5, 8, m64=512, m96=672, m104=672), "standardEDSv5Family",
           0.072, 0.15, 38400),
    Series("Easv5", "Standard_E{n}as_v5", ratio(E_AV5, 8, m96=672), "standardEASv5Family", 0.0565, 0.16),
    Series("Eadsv5", "Standard_E{n}ads_v5", ratio(E_AV5, 8, m96=672), "standardEADSv5Family", 0.0655, 0.16,
           38400),
    Series("Esv6", "Standard_E{n}s_v6", ratio((2, 4, 8, 16, 20, 32, 48, 64, 96, 128), 8),
           "StandardEsv6Family", 0.066, 0.18, hyperv="V2"),
    # F: compute optimised
    Series("Fsv2", "Standard_F{n}s_v2", ratio((2, 4, 8, 16, 32, 48, 64, 72), 2), "standardFSv2Family",
           0.0425, 0.12, 8192),
    Series("Fasv6", "Standard_F{n}as_v6", ratio((2, 4, 8, 16, 32, 48, 64), 4), "StandardFasv6Family",
           0.0485, 0.18, hyperv="V2", vcpus_per_core=1),
    Series("Falsv6", "Standard_F{n}als_v6", ratio((2, 4, 8, 16, 32, 48, 64), 2), "StandardFalsv6Family",
           0.0428, 0.18, hyperv="V2", vcpus_per_core=1),
    # B: burstable
    Series("B", "", B_SIZES, "standardBSFamily", 0.0, None, names=B_NAMES, prices=B_PRICES, temp_disks=B_TEMP,
           vcpus_per_core=1),
    bv2("Bsv2", "", "standardBsv2Family", 0.0104),
    bv2("Basv2", "a", "standardBasv2Family", 0.0094),
    bv2("Bpsv2", "p", "standardBpsv2Family", 0.0084, arch="Arm64", largest=16),
)


@dataclass(frozen=True)
class Region:
    """What differs between regions: price level, zones, and the odd restriction."""

    name: str
    price_factor: float
    zones: tuple[str, ...]
    zone_exceptions: dict[str, tuple[str, ...]]  # size name or series key -> zones
    zone_restrictions: dict[str, tuple[str, ...]]  # size -> zones NotAvailableForSubscription
    location_restrictions: tuple[str, ...]  # sizes NotAvailableForSubscription in the whole region


REGIONS = (
    Region(
        name="westus2",
        price_factor=1.0,
        zones=ALL_ZONES,
        zone_exceptions={
            "Dasv6": ("2", "3"),
            "Dalsv6": ("2", "3"),
            "Fasv6": ("2", "3"),
            "Falsv6": ("2", "3"),
            "Bpsv2": ("1", "3"),
            "Standard_D15_v2": ("1", "2"),
            "Standard_DS15_v2": ("1", "2"),
            "Standard_E104s_v5": ("1", "2"),
            "Standard_E104_v5": ("1", "2"),
            "Standard_E104ds_v5": ("1", "2"),
        },
        zone_restrictions={"Standard_D4as_v5": ("3",), "Standard_F72s_v2": ("1",)},
        location_restrictions=("Standard_D96as_v4",),
    ),
    Region(
        name="eastus",
        price_factor=0.96,
        zones=ALL_ZONES,
        zone_exceptions={"Dalsv6": ("1", "2"), "Falsv6": ("1", "2"), "Standard_D192s_v6": ("1", "3")},
        zone_restrictions={"Standard_B2s": ("1",), "Standard_D2as_v5": ("2",)},
        location_restrictions=("Standard_D96lds_v5",),
    ),
)


def fmt(value: float) -> str:
    """Numbers as the SKU API writes them: '16', '3.5', '0.5'."""
    return str(int(value)) if float(value).is_integer() else str(value)


def sku_entry(series: Series, index: int, region: Region) -> dict[str, object]:
    vcpus, memory = series.sizes[index]
    if series.names:
        short = series.names[index]
        name = f"Standard_{short}"
    else:
        name = series.template.format(n=vcpus)
        short = name.removeprefix("Standard_")
    price = series.prices[index] if series.prices else series.price_per_vcpu * vcpus
    on_demand = round(price * region.price_factor, 4)
    spot = round(on_demand * series.spot_ratio, 4) if series.spot_ratio is not None else None
    temp_disk = series.temp_disks[index] if series.temp_disks else series.temp_disk_mb_per_vcpu * vcpus
    zones = region.zone_exceptions.get(name, region.zone_exceptions.get(series.key, region.zones))
    accelerated = vcpus >= 2 and series.key != "B"
    caps: list[tuple[str, str]] = []
    if temp_disk:
        caps.append(("MaxResourceVolumeMB", str(temp_disk)))
    caps += [
        ("OSVhdSizeMB", "1047552"),
        ("vCPUs", str(vcpus)),
        ("MemoryPreservingMaintenanceSupported", "True"),
        ("HyperVGenerations", series.hyperv),
        ("MemoryGB", fmt(memory)),
        ("MaxDataDiskCount", str(min(max(vcpus * 2, 2), 64))),
        ("CpuArchitectureType", series.arch),
        ("LowPriorityCapable", str(series.spot_ratio is not None)),
        ("PremiumIO", str(series.premium_io)),
        ("VMDeploymentTypes", "IaaS"),
        ("vCPUsAvailable", str(vcpus)),
        ("vCPUsPerCore", str(min(series.vcpus_per_core, vcpus))),
        ("EphemeralOSDiskSupported", str(series.premium_io and bool(temp_disk))),
        ("EncryptionAtHostSupported", "True"),
        ("AcceleratedNetworkingEnabled", str(accelerated)),
        ("RdmaEnabled", "False"),
        ("MaxNetworkInterfaces", str(min(max(vcpus // 2, 2), 8))),
    ]
    restrictions: list[dict[str, object]] = []
    if name in region.location_restrictions:
        restrictions.append({
            "type": "Location",
            "values": [region.name],
            "restrictionInfo": {"locations": [region.name]},
            "reasonCode": "NotAvailableForSubscription",
        })
    if name in region.zone_restrictions:
        restrictions.append({
            "type": "Zone",
            "values": [region.name],
            "restrictionInfo": {"locations": [region.name], "zones": list(region.zone_restrictions[name])},
            "reasonCode": "NotAvailableForSubscription",
        })
    return {
        "resourceType": "virtualMachines",
        "name": name,
        "tier": "Standard",
        "size": short,
        "family": series.family,
        "locations": [region.name],
        "locationInfo": [{"location": region.name, "zones": list(zones), "zoneDetails": []}],
        "capabilities": [{"name": k, "value": v} for k, v in caps],
        "restrictions": restrictions,
        "prices": {"onDemand": on_demand, "spot": spot},
    }


def region_document(region: Region) -> dict[str, object]:
    entries = [sku_entry(s, i, region) for s in SERIES for i in range(len(s.sizes))]
    names = [e["name"] for e in entries]
    if len(names) != len(set(names)):
        raise SystemExit("duplicate size names in the series table")
    return {
        "region": region.name,
        "readAt": READ_AT,
        "source": "bundled snapshot (scripts/gen_catalog.py): Linux pay-as-you-go prices in USD per hour",
        "value": entries,
    }


def render(region: Region) -> str:
    """One size per line: small, readable diffs when a fact changes."""
    doc = region_document(region)
    entries = doc.pop("value")
    head = json.dumps(doc)[:-1]
    body = ",\n".join(" " + json.dumps(e, separators=(",", ":")) for e in entries)  # type: ignore[attr-defined]
    return f'{head}, "value": [\n{body}\n]}}\n'



def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Generate the bundled VM-size catalog snapshots (ARM resource-SKU JSON plus prices).",
        epilog="examples:\n  python scripts/gen_catalog.py\n  python scripts/gen_catalog.py --check",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    default_out = Path(__file__).resolve().parents[1] / "fixtures" / "skus"
    parser.add_argument("--out", type=Path, default=default_out, help=f"output directory (default {default_out})")
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if a file differs")
    args = parser.parse_args(argv)
    stale = []
    for region in REGIONS:
        path = args.out / f"{region.name}.json"
        text = render(region)
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path))
            continue
        args.out.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {path} ({len(region_document(region)['value'])} sizes)")  # type: ignore[arg-type]
    if stale:
        print("stale: " + ", ".join(stale) + " (run scripts/gen_catalog.py)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
