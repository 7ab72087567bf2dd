"""Command-line flags generated from a config dataclass (STYLE.md habit 3).

Every entry point (train.py, evaluate.py, the theory scripts, the benchmarks) keeps its
hyperparameters in one dataclass; each field `foo_bar` becomes `--foo-bar` with the field's
type and default, and its help is the field's metadata["help"] (write fields with `arg`).
Unknown flags and values of the wrong type are errors (argparse exits with status 2).
"""
import argparse
import dataclasses
import json
from pathlib import Path


def arg(default, help: str):
    """A dataclass field with its one-line meaning, shown by --help."""
    return dataclasses.field(default=default, metadata={"help": help})


def parse_config(cls, argv=None, description=None):
    """An instance of dataclass `cls` from command-line flags (booleans: --flag / --no-flag)."""
    parser = argparse.ArgumentParser(description=description, allow_abbrev=False)
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        help_text = f"{f.metadata.get('help', '')} (default: {f.default})"
        if f.type in (bool, "bool"):
            parser.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction,
                                default=f.default, help=help_text)
        else:
            kind = {"int": int, "float": float, "str": str}.get(f.type, f.type)
            parser.add_argument(flag, dest=f.name, type=kind, default=f.default, help=help_text)
    return cls(**vars(parser.parse_args(argv)))


def save_config(cfg, path) -> Path:
    """Write the resolved config as JSON (saved with every run and checkpoint)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dataclasses.asdict(cfg), indent=2) + "\n")
    return path
