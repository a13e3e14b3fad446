"""The pure planner: a frozen ``snapshot.Snapshot`` in, a ``plan.Plan`` out (``solver.plan``).

Modules: ``snapshot`` (what the planner may look at), ``classes`` (pod equivalence classes),
``candidates`` (compatible sizes per NodePool, cached per catalog), ``ledger`` (quota and
NodePool-limit budgets), ``packing`` (bin-packing by count arithmetic), ``scarcity`` (the most
pods within short budgets), ``reasons`` (why pods wait), ``overhead`` (DaemonSet overhead),
``solver`` (the steps), ``plan`` (the result).
"""
