"""``karp-provisioner run``: the controller, configured from ``KARP_*`` variables and flags."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from provisioner.model.errors import ConfigError, KarpError
from provisioner.settings import MODES, Settings, env_name, flag_name

__all__ = ["build_parser", "main"]

EPILOG = """
Every option may also be given as an environment variable: --location is KARP_LOCATION,
--batch-idle-seconds is KARP_BATCH_IDLE_SECONDS, and so on. Flags override the environment.

examples:
  # in a cluster (workload identity; settings from the Deployment's environment)
  karp-provisioner

  # from a laptop against a cluster, quota-blind like Karpenter, with a log file
  karp-provisioner run --kubeconfig ~/.kube/config --cluster-name karpenter \\
      --subscription-id 00000000-0000-0000-0000-000000000000 --resource-group karpenter \\
      --location westus2 --node-resource-group MC_karpenter_karpenter_westus2 \\
      --subnet-id /subscriptions/…/virtualNetworks/aks-vnet/subnets/aks-subnet \\
      --mode karpenter --log-file /tmp/karp.log

  # the same scenario fully offline, both emulators included
  karp-sim demo
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="karp-provisioner run",
        description="Watch unschedulable pods, plan nodes within the subscription's vCPU quotas, and create, "
        "register and clean up the Azure VMs behind them.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    for name, info in Settings.model_fields.items():
        kwargs: dict[str, Any] = {"dest": name, "default": None, "metavar": name.split("_")[-1].upper()}
        help_text = f"{info.description} (env {env_name(name)})"
        if name == "mode":
            kwargs["choices"] = MODES
            kwargs.pop("metavar")
        if name == "log_level":
            kwargs["choices"] = ("DEBUG", "INFO", "WARN", "ERROR")
            kwargs.pop("metavar")
        if not info.is_required() and info.default not in ("", None):
            help_text += f"; default {info.default}"
        parser.add_argument(flag_name(name), help=help_text, **kwargs)
    return parser


def _assemble(settings: Settings) -> Any:
    from provisioner.controller.service import assemble_service

    return assemble_service(settings)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(argv or []))
    flags = {k: v for k, v in vars(args).items() if v is not None}
    try:
        settings = Settings.load(flags=flags)
    except ConfigError as e:
        print(f"karp-provisioner: {e}", file=sys.stderr)
        return 2
    try:
        running = _assemble(settings)
    except KarpError as e:
        print(f"karp-provisioner: {e}", file=sys.stderr)
        return 2
    stop = threading.Event()

    def _stop(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    running.start()
    try:
        stop.wait()
    finally:
        running.stop()
    return 0
