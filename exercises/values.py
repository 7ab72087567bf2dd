"""The values a graded test compares, in a form the grader can compare without the student's code.

A graded test calls expect.check(computed, expected, case). The process that runs the test (and
so the student's code) writes the computed value down with `encode`: plain JSON, tagged with its
type. The grader's process, which never imports the student's code, reads it back, compares it
with the expected value (`compare`) and shows both (`show`). Nothing here imports torch or numpy:
a tensor is known by its methods, so the grader starts fast and trusts no object it is handed.

    encode(x)                      a JSON-ready tree: {"tensor": [...], "shape", "dtype"},
                                   {"frozenset": [...]}, {"fraction": [n, d]}, numbers, ...
    compare(computed, expected, tol)   None when equal, else the difference in a few words
    show(value, known=None)        the value as a student reads it; with `known` (the strings of
                                   the expected value), any other string is shown as '...'
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

MAX_ITEMS = 20_000  # elements of one tensor written down; a larger one is written as its shape
SHOWN = 600  # characters of one value shown in feedback
CONTAINERS = ("tuple", "list", "frozenset", "set")
DTYPES = {"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32"}
DTYPES |= {"float64", "complex64", "complex128"}
NAMES = {
    "None": "None",
    "bool": "a bool",
    "int": "an int",
    "float": "a float",
    "str": "a str",
    "fraction": "a Fraction",
    "tensor": "a tensor",
    "ndarray": "a numpy array",
    "numpy": "a numpy number",
    "tuple": "a tuple",
    "list": "a list",
    "frozenset": "a frozenset",
    "set": "a set",
    "dict": "a dict",
    "object": "an object of another type",
}


def encode(x, depth: int = 0):
    """x as a JSON-ready tree that keeps its type (tensors and arrays detached, as nested lists)."""
    if depth > 20:
        return {"object": "nested too deep"}
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, Fraction):
        return {"fraction": [x.numerator, x.denominator]}
    module = type(x).__module__.split(".")[0]
    try:
        if module == "torch" and hasattr(x, "detach") and hasattr(x, "shape"):
            return _array("tensor", x.detach().cpu(), str(x.dtype).replace("torch.", ""))
        if module == "numpy" and hasattr(x, "dtype"):
            if getattr(x, "shape", ()) == ():
                return {"numpy": str(x.dtype), "value": x.item()}
            return _array("ndarray", x, str(x.dtype))
    except Exception:  # an object that only looks like a tensor
        return {"object": type(x).__name__}
    if isinstance(x, (tuple, list)):
        return {"tuple" if isinstance(x, tuple) else "list": [encode(v, depth + 1) for v in x]}
    if isinstance(x, (frozenset, set)):
        items = sorted((encode(v, depth + 1) for v in x), key=lambda v: json.dumps(v))
        return {"frozenset" if isinstance(x, frozenset) else "set": items}
    if isinstance(x, dict):
        return {"dict": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in x.items()]}
    return {"object": type(x).__name__}


def _array(tag: str, x, dtype: str) -> dict:
    shape = [int(n) for n in x.shape]
    if math.prod(shape) > MAX_ITEMS:
        return {"object": f"{tag} of shape {tuple(shape)}, too large to compare"}
    return {tag: x.tolist(), "shape": shape, "dtype": dtype}


def kind(e) -> str:
    """The type an encoded value was written as (a NAMES key); "object" for anything else."""
    if e is None or isinstance(e, (bool, int, float, str)):
        return {type(None): "None", bool: "bool", int: "int", float: "float", str: "str"}[type(e)]
    if isinstance(e, dict) and e:
        tag = next(iter(e))
        return (
            tag if tag in NAMES and tag not in ("None", "bool", "int", "float", "str") else "object"
        )
    return "object"


def number(e) -> float | None:
    """The number an encoded value holds (a one-element tensor or array too), else None."""
    k = kind(e)
    if k in ("bool", "int", "float"):
        return float(e)
    if k == "numpy" and isinstance(e.get("value"), (bool, int, float)):
        return float(e["value"])
    if k == "fraction":
        n, d = e["fraction"]
        return n / d
    if k in ("tensor", "ndarray") and math.prod(e.get("shape", [0])) == 1:
        flat = _flat(e[k])
        return float(flat[0]) if flat and isinstance(flat[0], (bool, int, float)) else None
    return None


def _flat(values) -> list:
    if isinstance(values, list):
        return [v for item in values for v in _flat(item)]
    return [values]


def _close(a, b, tol: float) -> bool:
    if not all(isinstance(v, (bool, int, float)) for v in (a, b)):
        return False
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or abs(a - b) <= tol


def compare(c, e, tol: float = 1e-6, at: str = "") -> str | None:
    """None when the computed value c equals the expected e (numbers and tensors within tol, NaN
    where NaN is expected), else what differs, saying so when it is the type."""
    where = f"at {at}: " if at else ""
    kc, ke = kind(c), kind(e)
    if ke in ("tensor", "ndarray"):
        if kc not in ("tensor", "ndarray"):
            return f"{where}{NAMES[ke]} was expected, not {NAMES[kc]}"
        if c.get("shape") != e["shape"]:
            return f"{where}the shapes differ"
        got, want = _flat(c[kc]), _flat(e[ke])
        if len(got) != len(want) or not all(_close(a, b, tol) for a, b in zip(got, want)):
            return f"{where}the values differ"
        return None
    if ke == "float":
        value = number(c)
        if value is None:
            return f"{where}a number was expected, not {NAMES[kc]}"
        return None if _close(value, e, tol) else f"{where}the values differ"
    if ke in ("int", "fraction"):
        if kc == "float" or (kc == "numpy" and isinstance(c.get("value"), float)):
            return f"{where}an exact number was expected, not a float"
        if kc not in ("int", "fraction", "numpy", "bool"):
            return f"{where}{NAMES[ke]} was expected, not {NAMES[kc]}"
        exact = Fraction(*e["fraction"]) if ke == "fraction" else e
        got = Fraction(*c["fraction"]) if kc == "fraction" else c["value"] if kc == "numpy" else c
        return None if got == exact else f"{where}the values differ"
    if ke == "bool":
        got = c["value"] if kc == "numpy" else c
        if not isinstance(got, bool):
            return f"{where}a bool was expected, not {NAMES[kc]}"
        return None if got == e else f"{where}the values differ"
    if ke in CONTAINERS:
        if kc != ke:
            return f"{where}{NAMES[ke]} was expected, not {NAMES[kc]}"
        if ke in ("frozenset", "set"):
            same = {json.dumps(v) for v in c[kc]} == {json.dumps(v) for v in e[ke]}
            return None if same else f"{where}the items differ"
        if len(c[kc]) != len(e[ke]):
            return f"{where}{len(e[ke])} items were expected, not {len(c[kc])}"
        for i, (a, b) in enumerate(zip(c[kc], e[ke])):
            problem = compare(a, b, tol, f"{at}[{i}]")
            if problem:
                return problem
        return None
    if ke == "dict":
        if kc != "dict":
            return f"{where}a dict was expected, not {NAMES[kc]}"
        got = {json.dumps(k): v for k, v in c["dict"]}
        want = {json.dumps(k): v for k, v in e["dict"]}
        if set(got) != set(want):
            return f"{where}the keys differ"
        for key, value in want.items():
            problem = compare(got[key], value, tol, f"{at}[{show(json.loads(key))}]")
            if problem:
                return problem
        return None
    return None if c == e else f"{where}the values differ"


def strings(e) -> set:
    """Every string an encoded value holds (the grader shows only these of a computed value)."""
    if isinstance(e, str):
        return {e}
    if isinstance(e, list):
        return set().union(*(strings(v) for v in e))
    if isinstance(e, dict):
        return set().union(*(strings(v) for v in e.values()))
    return set()


def show(e, known: set | None = None) -> str:
    """The value as a student reads it, numbers at 4 decimals, at most SHOWN characters. With
    `known`, a string not in it (and any type name or repr the grader cannot vouch for) is '...'."""
    text = _show(e, known)
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


def _show(e, known) -> str:
    k = kind(e)
    if k == "float":
        return repr(round(e, 4))
    if k in ("None", "bool", "int"):
        return repr(e)
    if k == "str":
        return repr(e) if known is None or e in known else "'...'"
    if k == "fraction":
        return f"Fraction({e['fraction'][0]}, {e['fraction'][1]})"
    if k in ("tensor", "ndarray"):
        dtype = e.get("dtype") if known is None or e.get("dtype") in DTYPES else "?"
        shape = tuple(e.get("shape", ()))
        return f"{_nested(e[k], known)} (shape {shape}, {dtype})"
    if k == "numpy":
        return _show(e.get("value"), known)
    if k in CONTAINERS:
        items = ", ".join(_show(v, known) for v in e[k])
        return {"tuple": f"({items}{',' if len(e[k]) == 1 else ''})", "list": f"[{items}]"}.get(
            k, f"{k}({{{items}}})"
        )
    if k == "dict":
        return "{" + ", ".join(f"{_show(a, known)}: {_show(b, known)}" for a, b in e["dict"]) + "}"
    name = e.get("object") if isinstance(e, dict) else None
    return f"<{name}>" if known is None and isinstance(name, str) else "<another type>"


def _nested(values, known) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_nested(v, known) for v in values) + "]"
    return _show(values, known)
