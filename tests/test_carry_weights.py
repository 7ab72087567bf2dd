"""bench/carry_weights.py: a file cut into parts for commands of at most 64 MiB, joined back
bit for bit where every part arrived whole, and refused with one sentence where one did not."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.carry_weights import MIB, PACKAGE, join, sha256, split

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def weights(tmp_path):
    """A 5.5 MiB stand-in for the GGUF file, cut into parts of 2, 2 and 1.5 MiB."""
    source = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    source.write_bytes(os.urandom(5 * MIB + MIB // 2))
    manifest = split(source, tmp_path / "carry", first_mib=2, part_mib=2)
    return source, tmp_path / "carry", manifest


def test_the_parts_are_cut_to_size_and_rejoin_to_the_same_bytes(weights, tmp_path):
    """The first part is first_mib, the next part_mib, the last the rest, each in a folder of
    its own with the manifest; joined, they are the source file byte for byte, in a package
    folder that the import system finds."""
    source, carry, manifest = weights
    assert [p["size"] for p in manifest["parts"]] == [2 * MIB, 2 * MIB, MIB + MIB // 2]
    assert sorted(d.name for d in carry.iterdir()) == ["smollm2-1", "smollm2-2", "smollm2-3"]
    assert all((carry / f"smollm2-{k}" / "manifest.json").exists() for k in (1, 2, 3))
    target = join(carry, tmp_path / "site")
    assert target.read_bytes() == source.read_bytes() and sha256(target) == manifest["sha256"]
    sys.path.insert(0, str(tmp_path / "site"))
    try:
        found = importlib.util.find_spec(PACKAGE)
        assert Path(found.origin).parent == target.parent
    finally:
        sys.path.remove(str(tmp_path / "site"))
        sys.modules.pop(PACKAGE, None)


def test_a_missing_part_stops_the_join_and_names_it(weights, tmp_path):
    """The machine went cold between two commands: the part carried first is gone. The join
    names it, says what to do, and writes no joined file."""
    _, carry, _ = weights
    (carry / "smollm2-1" / "part-1").unlink()
    with pytest.raises(ValueError, match=r"part 1 of 3 .* is missing: the machine went cold"):
        join(carry, tmp_path / "site")
    assert not list((tmp_path).glob("site/**/*.gguf*"))


def test_a_damaged_part_stops_the_join(weights, tmp_path):
    """A part of the right size whose bytes changed is caught by its sha256."""
    _, carry, _ = weights
    path = carry / "smollm2-2" / "part-2"
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="part 2 of 3 .* is damaged"):
        join(carry, tmp_path / "site")


def test_the_command_stops_with_one_sentence(weights, tmp_path):
    """On the command line a missing part is one sentence on stderr and exit status 2."""
    _, carry, _ = weights
    (carry / "smollm2-3" / "part-3").unlink()
    script = ROOT / "bench" / "carry_weights.py"
    args = ["--action", "join", "--parts", str(carry), "--into", str(tmp_path / "site")]
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "part 3 of 3" in done.stderr
