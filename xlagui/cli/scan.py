"""`xlagui scan DIR`: what is in a dataset folder, and what is wrong with it."""

from __future__ import annotations

import argparse
import json

from xlagui.cli.common import EXIT_FAILED, EXIT_OK
from xlagui.cli.common import scan_folder as _scan
from xlagui.core.protocol.config import RunConfig


def cmd_scan(args: argparse.Namespace) -> int:
    RunConfig(holdout_percent=args.holdout_percent, seed=args.seed)  # range checks
    scan = _scan(args.dataset, args.holdout_percent, args.seed)
    if args.json:
        from xlagui.present.scan_problems import problem_text

        # Each problem with its line in words beside its kind, sentence and facts.
        data = scan.to_dict()
        for saved, problem in zip(data["problems"], scan.problems, strict=True):
            saved["message"] = problem_text(problem)
        print(json.dumps(data, indent=1))
    else:
        from xlagui.present.scan import summary_text  # with the scan, which the start skips

        print(summary_text(scan))
    return EXIT_OK if scan.ok else EXIT_FAILED
