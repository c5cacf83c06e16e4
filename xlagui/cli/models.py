"""`xlagui models`: the built-in models, with their parameter count."""

from __future__ import annotations

import argparse

from xlagui.cli.common import EXIT_OK
from xlagui.cli.common import console as _console
from xlagui.core.model.sources import builtin_names
from xlagui.core.protocol.config import ConfigError


def cmd_models(args: argparse.Namespace) -> int:
    """`xlagui models`: every built-in model with its parameter count, each built once in one
    worker process."""
    from rich.table import Table

    from xlagui.core.measure.model_check import check_models
    from xlagui.core.model.check import ModelCheckSpec
    from xlagui.core.protocol.config import ModelChoice, check_image_size
    from xlagui.present.models import models_rows, own_models_line

    if args.classes < 2:
        raise ConfigError(f"a classifier needs at least 2 classes, got {args.classes}")
    specs = [
        ModelCheckSpec(
            model=ModelChoice(name=name),
            image_size=check_image_size(args.image_size, ModelChoice(name=name)),
            num_classes=args.classes,
            count_flops=False,
        )
        for name in builtin_names()
    ]
    console = _console()
    with console.status(f"building the {len(specs)} built-in models once…"):
        checks = check_models(specs)
    table = Table(
        title=f"Built-in models (--model NAME), parameters at {args.image_size} px for "
        f"{args.classes} classes",
        title_justify="left",
    )
    for column in ("name", "parameters", "what it is"):
        table.add_column(column, justify="right" if column == "parameters" else "left")
    for row in models_rows(checks):
        table.add_row(*row)
    console.print(table)
    console.print(own_models_line())
    return EXIT_OK
