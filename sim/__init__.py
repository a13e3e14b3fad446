"""Local stand-ins for what cannot run here: an ARM emulator, a Kubernetes API emulator, scenarios."""
