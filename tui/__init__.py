"""karp-tui: live and replayed state of pending pods, NodeClaims, nodes, quota and findings."""
