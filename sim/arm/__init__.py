"""Azure Resource Manager emulator."""
