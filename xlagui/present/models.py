"""The model in words: the line the command line prints before a comparison, the memory
warning, the rows of `xlagui models`, and what the window's "Model" group, its file dialog, the
drops and `--model`'s help say about the model sources, and what the "Model" group says of the
chosen model and its check. Qt-free.

Every choice and list here is built from the registry of model sources
(`xlagui.core.model.sources`): the built-ins' words are `BUILTIN_WORDS`, each source of files'
words a row of `SOURCE_WORDS` (a source without one gets words from its suffix).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from xlagui.core.model import sources
from xlagui.core.model.check import MemoryGuard
from xlagui.core.model.source import ModelFacts, ModelSource
from xlagui.core.protocol.config import ConfigError, RunConfig
from xlagui.core.protocol.events import ModelEvent
from xlagui.present.levels import Level
from xlagui.present.limits import flop_count
from xlagui.present.units import size_bytes

# What each built-in model is (`xlagui models`, the window's list and its caption).
BUILTIN_WORDS = {
    "cnn": "the article's CNN: three 5x5 convolutions, two dense layers (the default)",
    "mobilenetv2": "MobileNetV2 (keras.applications, untrained): depthwise convolutions",
    "resnet50": "ResNet50 (keras.applications, untrained): 50 layers of convolutions with skips",
    "efficientnetb0": "EfficientNetB0 (keras.applications, untrained): depthwise convolutions, "
    "squeeze-excite",
    "vit": "a small Vision Transformer: 8x8 patches, 4 blocks of self-attention, dim 128",
    "mixer": "a small MLP-Mixer: 8x8 patches, 4 blocks of dense token and channel mixing, "
    "dim 128",
}


@dataclass(frozen=True)
class SourceWords:
    """How the window and the command line name one source of model files.

    `one`: a file of it, after its path ("a saved Keras model"); `many`: its files in the file
    dialog's filter ("Keras models"); `what`: what the file is, in the "Open model file…"
    tooltip; `argument`: `--model`'s help; `own`: the last line of `xlagui models`."""

    one: str
    many: str
    what: str
    argument: str
    own: str


BUILDER = "build_model(input_shape, num_classes)"
SOURCE_WORDS = {
    "keras": SourceWords("a saved Keras model", "Keras models", "a saved Keras model",
                         "a saved PATH.keras", "--model PATH.keras (a saved model)"),
    "h5": SourceWords("a legacy Keras model", "legacy Keras models", "a Keras model saved as HDF5",
                      "a saved PATH.h5 (legacy HDF5)", "--model PATH.h5 (a legacy Keras model)"),
    "python": SourceWords("a Python builder", "Python builders",
                          f"a Python file defining {BUILDER}", f"a PATH.py defining {BUILDER}",
                          f"--model PATH.py (a file defining {BUILDER})"),
}


def layer_lines(check: ModelEvent) -> list[str]:
    """The checked model's layers, one line each, the last saying how many are left out."""
    more = [f"… {check.more_layers} more layers"] if check.more_layers else []
    return [*check.summary, *more]


def model_line(config: RunConfig, check: ModelEvent | None) -> str:
    """"Model: mixer (file …, sha256 1a2b3c4d…), 309,649 parameters, 0.642 GFLOP per training
    step at batch 8, compiled with Adam + binary_crossentropy"."""
    m = config.model
    words = [f"Model: {m.label}"]
    if m.file:
        words[0] += f" ({m.file}, sha256 {m.sha256[:12]}…)"
    if m.params is not None:
        words.append(f"{m.params:,} parameters")
    if check is not None:
        if check.fixed_input_size:
            words.append(f"takes {check.image_size} px images")
        if check.flops_per_step:
            words.append(
                f"{flop_count(check.flops_per_step)} per training step at batch "
                f"{check.batch_size}"
            )
        elif check.flops_note:
            words.append(f"FLOPs not counted ({check.flops_note})")
        words.append(compiled_with(check.compile_words))
    if m.new_head:
        words.append("its last layer replaced (--new-head)")
    return ", ".join(words)


def memory_warning(guard: MemoryGuard, config: RunConfig) -> str:
    """"" when the estimate fits; else the sentence that says it may not."""
    if guard.fits:
        return ""
    each = f" ({guard.workers} workers at once, {size_bytes(guard.per_worker_bytes)} each)"
    return (
        f"{config.model.label} at batch {config.batch_size} and {config.image_size} px may not "
        f"fit: a training step needs about {size_bytes(guard.needed_bytes)}"
        f"{each if guard.workers > 1 else ''}, and {size_bytes(guard.available_bytes)} is "
        "free. Try a smaller batch size or image size."
    )


def models_rows(checks: list[ModelEvent]) -> list[tuple[str, str, str]]:
    """(name, parameters, description) per built-in model."""
    rows = []
    for check in checks:
        name = check.model.name
        params = f"{check.model.params:,}" if check.model.params is not None else "—"
        rows.append((name, params, BUILTIN_WORDS.get(name, "")))
    return rows


# --- The sources of models, in words -----------------------------------------------------------


def source_words(source: ModelSource) -> SourceWords:
    """`source`'s row of `SOURCE_WORDS`, or words made from its first suffix."""
    words = SOURCE_WORDS.get(source.name)
    if words is not None:
        return words
    suffix = source.suffixes[0] if source.suffixes else source.name
    return SourceWords(f"a {suffix} file", f"{suffix} files", f"a {suffix} file",
                       f"a PATH{suffix}", f"--model PATH{suffix}")


def _joined(items: list[str], word: str) -> str:
    """"a", "a or b", "a, b or c"."""
    return f" {word} ".join([", ".join(items[:-1]), items[-1]] if len(items) > 2 else items)


def model_help() -> str:
    """`--model`'s help: the built-ins, then each kind of model file."""
    files = [source_words(s).argument for s in sources.file_sources()]
    return (
        f"the model trained: {', '.join(sources.builtin_names())} (`xlagui models` says what "
        f"each is), {', '.join(files[:-1])}{', or ' if len(files) > 1 else ''}{files[-1]} "
        "(default: cnn, the article's)"
    )


def own_models_line() -> str:
    """The line under `xlagui models`' table: how to train a model of one's own."""
    owns = _joined([source_words(s).own for s in sources.file_sources()], "or")
    return f"Or your own: {owns}."


def file_filter() -> str:
    """The "Open model file…" dialog's filter: "Keras models and Python builders (*.keras *.py)"."""
    many = _joined([source_words(s).many for s in sources.file_sources()], "and")
    return f"{many} ({' '.join('*' + s for s in sources.file_suffixes())})"


def open_file_hint() -> str:
    """The "Open model file…" button's tooltip: each kind of file, with its suffix."""
    kinds = _joined([f"{source_words(s).what} ({', '.join(s.suffixes)})"
                     for s in sources.file_sources()], "or")
    return kinds[:1].upper() + kinds[1:]


def model_file_kinds(word: str = "or") -> str:
    """The suffixes of model files in a sentence: ".keras or .py"."""
    return _joined(list(sources.file_suffixes()), word)


def not_a_model_file(path: Path) -> str:
    """Why a file picked or dropped as a model is not one."""
    return (f"“{path.name}” is not a model file: xlagui takes {model_file_kinds('and')} "
            "files.")


def about(facts: ModelFacts) -> str:
    """What the chosen model is, under the window's model list: a built-in's description, or a
    file with its kind and digest."""
    if not facts.file:
        text = BUILTIN_WORDS.get(facts.name, facts.name)
        return text[:1].upper() + text[1:] + "."
    kind = source_words(sources.SOURCES[facts.source]).one
    return f"{facts.file} ({kind}, sha256 {facts.sha256[:12]}…)"


def code_note(facts: ModelFacts) -> str:
    """The warning that choosing the model runs the user's code ("" when it runs none)."""
    if not facts.runs_code:
        return ""
    return (f"Running a comparison runs the Python code in {Path(facts.file).name} (in the "
            "worker processes, not in this window). Open only files you trust.")


# --- The window's "Model" group: its list and what it says of the chosen model ----------------


def short_count(n: int | None) -> str:
    """A parameter count in a few characters: "2.3 M", "560 k", "812"."""
    if n is None:
        return "?"
    if n >= 1_000_000:
        return f"{n / 1e6:.1f} M"
    if n >= 1_000:
        return f"{n / 1e3:.0f} k"
    return str(n)


def builtin_item(name: str, check: ModelEvent | None) -> str:
    """A built-in's line in the model list: "vit — 560 k parameters" (its name alone until a
    check has counted them)."""
    params = (f" — {short_count(check.model.params)} parameters"
              if check is not None and check.model.params is not None else "")
    return f"{name}{params}"


def file_item(file: str) -> str:
    """A model file's line in the model list: "net.keras  (your file)"."""
    return f"{Path(file).name}  (your file)"


def refusal(exc: ConfigError) -> str:
    """Why a model cannot be chosen, as a sentence (the core's reason, capitalised)."""
    text = str(exc)
    return text[0].upper() + text[1:] + "."


def not_restored(why: str | ConfigError) -> str:
    """Why the saved model was not restored: a refused choice, or why it cannot be shown (a
    sentence already)."""
    reason = f"{why}." if isinstance(why, ConfigError) else why
    return f"The saved model was not restored: {reason}"


def checking_for_run(label: str) -> str:
    """Why a comparison cannot start while its model's check has not answered."""
    return f"Checking {label}: it is built once before anything runs…"


def not_checked(label: str, exc: BaseException) -> str:
    """A check that failed without saying why the model is refused."""
    return f"{label} could not be checked: {type(exc).__name__}: {exc}"


def counts_failed(exc: BaseException) -> str:
    """The built-ins' parameter counts could not be had."""
    return f"The built-in models could not be built to count their parameters: {exc}"


def check_status(*, refused: str, checking: str, check: ModelEvent | None, label: str,
                 counts: bool) -> tuple[str, Level | None]:
    """What the "Model" group says of the chosen model, and its level (None: plain): why it
    was refused, that it is being built (`checking`: the label of the model being built, while
    nothing is known of it), its summary line once built (`flops_status` says the rest), or
    that it will be built to count its parameters (when the window `counts` them at all)."""
    if refused:
        return refused, Level.ERROR
    if check is not None:  # its FLOPs may still be being counted: `flops_status` says so
        return summary_line(check), None
    if checking:
        return f"Building {checking} once to count its parameters…", None
    return (f"Building {label} once to count its parameters…" if counts else ""), None


def summary_line(check: ModelEvent) -> str:
    """"154 layers, 2,259,265 parameters, takes 150×150×3 images, 1 output (sigmoid)…"."""
    params = f"{check.model.params:,}" if check.model.params is not None else "?"
    fixed = " (fixed by the model)" if check.fixed_input_size else ""
    activation = "sigmoid" if check.outputs == 1 else "softmax"
    words = [f"{check.layers:,} layers, {params} parameters",
             f"input {check.image_size}×{check.image_size}×3{fixed}",
             f"output {check.outputs} ({activation})"]
    if check.compile_words:
        words.append(compiled_with(check.compile_words))
    if check.memory_bytes:
        words.append(f"about {size_bytes(check.memory_bytes)} per training step at batch "
                     f"{check.batch_size}")
    return "; ".join(words) + "."


def flops_status(check: ModelEvent | None, counting: bool) -> str:
    """The "Model" group's line on a training step's FLOPs, apart from the summary (they take
    a compiled step; the parameters do not): still being counted, counted, or why not."""
    if check is None or counting:
        return "FLOPs per training step: still being counted (one training step is compiled)…"
    if check.flops_per_step:
        return (f"FLOPs per training step: {flop_count(check.flops_per_step)} at batch "
                f"{check.batch_size}.")
    if check.flops_note:
        return f"FLOPs per training step: not counted ({check.flops_note})."
    return ""


def compiled_with(compile_words: str) -> str:
    """"compiled with Adam + binary_crossentropy"; a `.keras` file's own optimizer and loss
    "… (as saved in the file)", also from a check saved before it said so ("from the file: …")."""
    old = "from the file: "
    if compile_words.startswith(old):
        compile_words = f"{compile_words[len(old):]} (as saved in the file)"
    return f"compiled with {compile_words}"
