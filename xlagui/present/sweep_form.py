"""What the Sweep tab's fields say: their labels, what each takes, and the plan in words
before a sweep starts."""

from __future__ import annotations

from dataclasses import dataclass

from xlagui.core.protocol.settings import Setting
from xlagui.present.units import duration


@dataclass(frozen=True)
class FieldText:
    """One axis field: its label, the example shown while empty, and what it takes."""

    label: str
    placeholder: str
    hint: str


def setting_field(one: Setting) -> FieldText:
    """The field of a setting a sweep may vary, from its entry: "Batch sizes", "e.g. 16, 128",
    "Whole numbers, separated by commas. Empty: the batch size of the settings." (in px when
    its unit is)."""
    unit = f" in {one.unit.strip()}" if one.unit.strip() else ""
    return FieldText(one.plural[:1].upper() + one.plural[1:],
                     "e.g. " + ", ".join(one.example.split(",")),
                     f"Whole numbers{unit}, separated by commas. Empty: the {one.words} of the "
                     "settings.")


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


def cell_progress(settings: str, measured: float | None, budget: float | None) -> str:
    """"batch 64, 64 px: measuring, 12 s of 45 s"; "…: starting its workers" before its
    first round."""
    if measured is None:
        return f"{settings}: starting its workers"
    of = f" of {duration(budget)}" if budget else ""
    return f"{settings}: measuring, {duration(measured)}{of}"


STOPPED = ("Stopped. The cells that finished are kept in {folder}: run the same sweep into it "
           "to do the rest.")
FINISHED = "Sweep finished: {done} of {total} cells measured, {failed} failed. Saved in {folder}."
RUNNING_ELSEWHERE = "A comparison is running: start the sweep when it has finished."
SWEEP_RUNNING = "A sweep is running (Sweep tab)."
CANNOT_OPEN = "Cannot open the sweep"
NOT_A_SWEEP = "{path} does not exist: this folder holds no sweep"
CANNOT_START = "Cannot start the sweep"
CLOSE_QUESTION = ("Stop the sweep?", "A sweep is running. Closing xlagui stops it; the cells "
                  "that finished stay in its folder, and the cell in progress runs again when "
                  "the same sweep is run into that folder.")
