"""Kubernetes API emulator."""
