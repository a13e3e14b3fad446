"""Pure domain model shared by the provisioner, karp-diagnose, karp-tui and the emulators."""
