"""What every benchmark shares: where results go, and writing its figures to a file."""
import json
import os

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def save_results(results: dict, path: str) -> None:
    """Benchmarks print their figures and also write them here (JSON)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(results, f, indent=2)
    print("wrote", path)
