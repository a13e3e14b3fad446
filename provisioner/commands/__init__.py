"""Command-line entry points of karp-provisioner."""
