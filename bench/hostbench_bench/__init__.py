"""./hostbench bench AREA: our kernel and the reference tool on this host, matched parameters, interleaved
(A B A B ..., at least 3 pairs); a readable table, then one JSON line with the median ratios.
Each area is a module here exposing `run(pairs: int) -> BenchReport`. Nothing is installed: a missing tool
is reported as missing."""
AREAS = ("cpu", "memory", "disk", "network", "gpu")
