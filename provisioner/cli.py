"""``karp-provisioner``: run the controller, or preview a plan without touching anything."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

COMMANDS = {
    "run": ("provisioner.commands.run", "run the controller in a cluster (the default)"),
    "plan": ("provisioner.commands.plan", "preview the NodeClaims it would create for given pods, offline"),
}

USAGE = """usage: karp-provisioner [COMMAND] [OPTIONS]

A quota-aware node provisioner for AKS: it watches unschedulable pods, bin-packs them onto
Azure VM sizes within the subscription's vCPU quotas, and creates, registers and cleans up nodes.

commands:
{commands}

Run 'karp-provisioner COMMAND --help' for a command's options.
"""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        lines = "\n".join(f"  {name:<6} {text}" for name, (_, text) in COMMANDS.items())
        print(USAGE.format(commands=lines))
        return 0
    name = "run"
    if args and args[0] in COMMANDS:
        name = args.pop(0)
    module = importlib.import_module(COMMANDS[name][0])
    result: int = module.main(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
