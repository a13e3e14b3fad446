"""karp-diagnose: explains every stuck Pending pod from node-autoscaler logs and events."""
