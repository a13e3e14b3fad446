"""karp-diagnose: explains every stuck Pending pod from node-autoscaler logs and events."""

import os

# polars allocates through jemalloc, which keeps freed pages for 10 s by default. Reading a big
# log allocates and frees block after block, so ask it to hand them back after a second: the
# peak memory of a 1 GiB diagnosis drops by about 50 MiB at the same speed (bench/RESULTS.md).
# It only takes effect when set before polars is loaded; a value already set wins.
os.environ.setdefault("_RJEM_MALLOC_CONF", "dirty_decay_ms:1000,muzzy_decay_ms:0")
