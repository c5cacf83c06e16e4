"""What the Sweep tab's fields say: their labels, what each takes, and the plan in words
before a sweep starts."""

from __future__ import annotations

from dataclasses import dataclass

from xlagui.present import format as fmt


@dataclass(frozen=True)
class FieldText:
    """One axis field: its label, the example shown while empty, and what it takes."""

    label: str
    placeholder: str
    hint: str


BATCH = FieldText("Batch sizes", "e.g. 16, 64, 256",
                  "Whole numbers, separated by commas. Empty: the batch size of the settings.")
IMAGE = FieldText("Image sizes", "e.g. 64, 150",
                  "Sides in pixels, separated by commas. Empty: the image size of the settings.")
MODEL = FieldText("Models", "e.g. cnn, mixer",
                  "Built-in models by name or model files, separated by commas. Empty: the "
                  "model of the settings.")
ARMS = FieldText("Arms", "e.g. jit, bf16   or   jit; bf16",
                 "The arms each cell measures against its baseline, separated by commas; "
                 "lists separated by ; are swept (one cell per list). Empty: jit.")
LEVERS = FieldText("Runtime settings", "e.g. threads=1,2; onednn=on,off",
                   "Settings every worker of a cell takes: name=values, separated by ;. "
                   "Empty: none.")
BUDGET_HINT = ("The whole sweep's time, measuring and starting workers: each cell's budget is "
               "planned from it.")
FOLDER_HINT = ("Where the sweep keeps its cells. Running again into the same folder runs only "
               "the cells it does not hold yet.")
NO_AXES = "Fill in at least one field to sweep."
NO_DATASET = "Load a dataset first (Dataset tab): every cell trains on it."


def field_error(label: str, message: str) -> str:
    """"Batch sizes: …", the reason a field is refused."""
    return f"{label}: {message}"


def plan_words(cells: int, cell_budget: int, expected_seconds: int, unrunnable: int) -> str:
    """"4 cells, 45 s of measuring each: about 5 min in all." (and the cells that cannot
    run: they become failed rows)."""
    words = (f"{cells} cell{'s' if cells != 1 else ''}, {fmt.duration(cell_budget)} of "
             f"measuring each: about {fmt.duration(expected_seconds)} in all.")
    if unrunnable:
        words += (f" {unrunnable} cannot run with these settings and will be a row with its "
                  "reason.")
    return words
