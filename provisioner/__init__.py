"""karp-provisioner: a quota-aware node provisioner for AKS."""
__version__ = "0.1.0"
