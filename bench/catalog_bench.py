"""Catalog and allocatable costs: cold load, cached load, lookups, pods_that_fit over a region.

    .venv/bin/python bench/catalog_bench.py

Prints per-operation times and the ratio of a cached load to a cold parse (measured in the
same run), so figures from a loaded machine still compare.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from provisioner.model import catalog as catalog_module
from provisioner.model.allocatable import pods_that_fit
from provisioner.model.resources import Resources


def per_call(fn: Callable[[], object], repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


def main() -> None:
    def cold() -> object:
        catalog_module._load.cache_clear()
        return catalog_module.load_catalog("westus2")

    cold_s = per_call(cold, 20)
    cat = catalog_module.load_catalog("westus2")
    cached_s = per_call(lambda: catalog_module.load_catalog("westus2"), 2000)
    pod = Resources.from_requests({"cpu": "1", "memory": "256M"})
    overhead = Resources.from_requests({"cpu": "250m", "memory": "481280Ki", "pods": "5"})
    fit_s = per_call(lambda: [pods_that_fit(it, pod, overhead) for it in cat.types], 50)
    print(f"sizes in westus2              {len(cat)}")
    print(f"load_catalog cold (parse)     {cold_s * 1e3:8.2f} ms")
    print(f"load_catalog cached           {cached_s * 1e6:8.2f} us  ({cold_s / cached_s:.0f}x faster than cold)")
    print(f"get(name)                     {per_call(lambda: cat.get('Standard_D16ls_v5'), 20000) * 1e6:8.2f} us")
    print(f"by_family('D')                {per_call(lambda: cat.by_family('D'), 2000) * 1e6:8.2f} us")
    print(f"cheapest_first()              {per_call(cat.cheapest_first, 200) * 1e6:8.2f} us")
    print(f"pods_that_fit, whole region   {fit_s * 1e3:8.2f} ms  ({fit_s / len(cat) * 1e6:.2f} us per size)")


if __name__ == "__main__":
    main()
