"""SmolLM2 on one GPU in RESULTS.md and the README (bench/report_smollm2.py, templates
smollm2_gpu.md and summary.md), rendered from a small bench/smollm2_gpu.py file written here."""

import json

from bench import report_results, report_smollm2, report_tables


def played(greedy, sampled):
    """A policy's figures as bench/smollm2_gpu.py writes them: 1..200 at half the held-out rate."""
    held, gen = (
        {"greedy": greedy, "sampled": sampled},
        {"greedy": greedy / 2, "sampled": sampled / 2},
    )
    return {"heldout": held, "gen200": gen | {"valid_rate": 0.9, "redundancy_rate": 0.1}}


GPU_FILE = {
    "command": "python bench/smollm2_gpu.py",
    "machine": "one NVIDIA H100",
    "date": "2026-12-02",
    "preset": "llm",
    "batch": {"secrets_per_step": 8, "group_size": 4},
    "split_seed": 7,
    "chosen_on": "the kept checkpoint's score on 10 validation secrets",
    "samples": 4,
    "step0": played(0.1, 0.2),
    "chosen": {"echo": {"lr": 5e-5, **played(0.4, 0.5)}, "grpo": {"lr": 1e-4, **played(0.3, 0.35)}},
    "runs": [
        {
            "estimator": "echo",
            "lr": 5e-5,
            "steps": 30,
            "kept_step": 20,
            "curve": [
                {
                    "step": 30,
                    "heldout_greedy": 0.4,
                    "heldout_sampled": 0.5,
                    "validation": 0.6,
                    "reward": 0.7,
                }
            ],
        },
        {"estimator": "grpo", "lr": 1e-4, "steps": None, "kept_step": None, "curve": []},
    ],
}


def test_the_gpu_section_and_summary_read_the_file(tmp_path):
    (tmp_path / "smollm2_gpu.json").write_text(json.dumps(GPU_FILE))
    with report_tables.reading(str(tmp_path)):
        section = "\n".join(report_smollm2.section_smollm2_gpu())
        summary = "\n".join(report_results.readme_summary())
    assert "(8 secrets x 4 rollouts) on split 7" in section
    assert "| ECHO, kept checkpoint | 5e-05 | 40.0 / 50.0 | 20.0 / 25.0 | 0.90 | 0.10 |" in section
    assert "| GRPO | 0.0001 | did not finish | - | - | - | - | - |" in section  # no curve yet
    line = next(x for x in summary.splitlines() if "on one GPU" in x)
    assert "step 0 10.0 / 5.0; ECHO (lr 5e-05) 40.0 / 20.0; GRPO (lr 0.0001) 30.0 / 15.0." in line


def test_no_gpu_file_no_gpu_section(tmp_path):
    with report_tables.reading(str(tmp_path)):
        assert report_smollm2.section_smollm2_gpu() == []
        assert "on one GPU" not in "\n".join(report_results.readme_summary())
