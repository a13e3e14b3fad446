"""``karp-sim``: the local stand-ins (ARM and Kubernetes emulators) and the scenarios."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

COMMANDS = {
    "arm": ("sim.arm.cli", "serve the Azure Resource Manager emulator (HTTPS on 127.0.0.1)"),
    "kube": ("sim.kube.cli", "serve the Kubernetes API emulator (HTTP on 127.0.0.1)"),
    "demo": ("sim.scenarios.demo", "run the founding scenario end to end, offline"),
    "chaos": ("sim.scenarios.chaos", "run the seeded chaos scenario and print its figures"),
}

USAGE = """usage: karp-sim COMMAND [OPTIONS]

Local, offline stand-ins for Azure and Kubernetes, spoken to over real HTTP by the same
SDK clients karp uses in production, and the scenarios that drive the whole system.

commands:
{commands}

Run 'karp-sim COMMAND --help' for a command's options.
"""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        lines = "\n".join(f"  {name:<6} {text}" for name, (_, text) in COMMANDS.items())
        print(USAGE.format(commands=lines))
        return 0 if args else 2
    name = args.pop(0)
    if name not in COMMANDS:
        print(f"karp-sim: unknown command {name!r} (choose from {', '.join(COMMANDS)})", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    result: int = module.main(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
