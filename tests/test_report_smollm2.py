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


def study_played(greedy, repeat):
    """A policy's figures as bench/smollm2_study.py writes them (1..200 at half the held-out
    rate, a valid share of 0.9 on both sets, a redundant one of 0.1 held-out and 0.25 on 1..200)."""
    both = played(greedy, greedy)
    both["heldout"] |= {"valid_rate": 0.9, "redundancy_rate": 0.1}
    both["gen200"]["redundancy_rate"] = 0.25
    return both | {"heldout_repeat_ratio": repeat}


def study_run(estimator, lr, steps, validation, kept_step=None):
    point = {"step": 10, "heldout_greedy": 0.5, "heldout_sampled": 0.25}
    point |= {"heldout_invalid_rate": 0.2, "heldout_redundancy_rate": 0.3}
    point["validation_score"] = validation
    curve = [point] if steps >= 10 else []
    return {
        "estimator": estimator,
        "lr": lr,
        "steps": steps,
        "kept_step": kept_step,
        "curve": curve,
    }


STUDY_FILE = {
    "command": "python bench/smollm2_study.py",
    "machine": "2 CPU cores",
    "date": "2026-12-03",
    "split_seed": 7,
    "study": {
        "estimators": "echo,grpo",
        "lrs": "3e-4,1e-3",
        "steps": 60,
        "screen_steps": 10,
        "seed": 0,
        "validation_secrets": 10,
        "eval_every": 10,
        "eval_samples": 2,
    },
    "config": {"secrets_per_step": 4, "group_size": 4, "validation_window": 3},
    "choice": {"echo": {"lr": "3e-4", "validation_scores": {"3e-4": 0.8, "1e-3": 0.1}}},
    "runs": [
        study_run("echo", 3e-4, 60, 0.8, kept_step=40),
        study_run("echo", 1e-3, 10, 0.1),
        study_run("grpo", 3e-4, 10, 0.6),
        study_run("grpo", 1e-3, 4, None),
    ],
}


def test_the_study_section_puts_each_run_and_its_kept_play_in_one_table(tmp_path):
    """A screened run shows its validation score at the screen's step whether or not its
    estimator's choice is made; a chosen run shows its kept checkpoint's play once played, the
    others their last evaluation; the first lines give the kept resolves only when all are
    played; the calls recorded say where each trained which run how far, a call that trained
    nothing unsaid."""
    study = json.loads(json.dumps(STUDY_FILE))
    (tmp_path / "smollm2_study.json").write_text(json.dumps(study))
    with report_tables.reading(str(tmp_path)):
        section = "\n".join(report_smollm2.section_smollm2_study())
        assert report_results.study_status() == {"kept": None}
    assert (
        "| GRPO, lr 0.0003 | 10 | 0.60 | - | evaluation at step 10 | 50.0 / 25.0 | - |" in section
    )
    assert "| ECHO, lr 0.0003 | 60 | 0.80 | yes | evaluation at step 10 |" in section
    assert "| GRPO, lr 0.001 | 4 | - | - | - | - |" in section
    assert "step 0 (the warm-up)" not in section and "*In progress:*" in section

    study["step0"], study["kept"] = study_played(0.1, 0.9), {"echo": study_played(0.7, 0.2)}
    study["kept"]["grpo"] = study_played(0.4, 0.6)
    study["kept"]["grpo"]["gen200"]["sampled"] = 0.15
    study["choice"]["grpo"] = {"lr": "3e-4", "validation_scores": {"3e-4": 0.6, "1e-3": 0.0}}
    study["runs"][2] = study_run("grpo", 3e-4, 60, 0.6, kept_step=30)
    call = {"date": "2026-12-07", "machine": MACHINE, "bf16_products": "float32 kernels"}
    study["calls"] = [  # two calls one after the other at one place, then one elsewhere
        call
        | {
            "steps_from": {"grpo-lr3e-4": 39, "echo-lr3e-4": 60},
            "steps_to": {"grpo-lr3e-4": 45, "echo-lr3e-4": 60},
        },
        call
        | {
            "steps_from": {"grpo-lr3e-4": 45, "echo-lr3e-4": 60},
            "steps_to": {"grpo-lr3e-4": 60, "echo-lr3e-4": 60},
        },
        call
        | {
            "date": "2026-12-08",
            "steps_from": {"grpo-lr3e-4": 60},
            "steps_to": {"grpo-lr3e-4": 60},
        },
    ]
    study["step0"]["played_on"] = [call]  # echo's kept play predates the record
    study["replayed"] = {"echo": study_played(0.65, 0.3) | {"played_on": [call]}}
    (tmp_path / "smollm2_study.json").write_text(json.dumps(study))
    with report_tables.reading(str(tmp_path)):
        section = "\n".join(report_smollm2.section_smollm2_study())
        status = report_results.study_status()
    kept = "| ECHO, lr 0.0003 | 60 | 0.80 | yes | kept checkpoint (step 40) | 70.0 / 70.0 |"
    assert kept + " 35.0 / 35.0 | 0.90 | 0.10 / 0.25 | 0.20 |" in section
    assert "| step 0 (the warm-up) | 0 | - | - | the start of every run | 10.0 / 10.0 |" in section
    assert "The study is complete." in section
    assert "averaged with the 2 evaluations before it, is best" in " ".join(section.split())
    flat = " ".join(section.split())
    where = "2026-12-07, 2 CPU cores (x86_64, AVX2 without bf16), torch 2.13.0+cpu"
    assert f"{where}, bf16 products in float32 kernels, 2 calls: grpo-lr3e-4 39 -> 60." in flat
    assert "2026-12-08" not in section
    plays = f"Where the plays ran: the start on {where}, bf16 products in float32 kernels; "
    assert plays + "ECHO's kept checkpoint: not recorded; GRPO's kept checkpoint: not" in flat
    again = "| ECHO, lr 0.0003 | 60 | - | yes | kept checkpoint (step 40), played again | 65.0 / "
    assert again + "65.0 | 32.5 / 32.5 | 0.90 | 0.10 / 0.25 | 0.30 |" in section
    assert f"ECHO's kept checkpoint again on {where}, bf16 products in float32 kernels." in flat
    # held-out greedy / 1..200 greedy / 1..200 sampled
    echo = {"resolve": "70.0 / 35.0 / 35.0", "step": 40, "again": "65.0 / 32.5 / 32.5"}
    grpo = {"resolve": "40.0 / 20.0 / 15.0", "step": 30, "again": None}
    assert status == {"step0": "10.0 / 5.0 / 5.0", "kept": {"echo": echo, "grpo": grpo}}


MACHINE = {"machine": "x86_64", "cpus": 2, "cpu_capability": "AVX2", "cpu_bf16": False}
MACHINE |= {"torch": "2.13.0+cpu", "platform": "Linux", "gpu": None}
PRECISION_FILE = {
    "command": "python bench/cpu_precision.py --repeats 3",
    "machine": MACHINE,
    "date": "2026-12-07",
    "threads": 2,
    "rows": 16,
    "precisions": {
        "fp32": {"warmup_batch_seconds": 40.0, "decode_seconds": 10.0},
        "bf16": {"warmup_batch_seconds": 400.0, "decode_seconds": 25.0},
    },
    "bf16_over_fp32": {"warmup_batch_seconds": 10.0, "decode_seconds": 2.5},
}
FIRST_RUN_FILE = {
    "command": "python bench/first_run.py",
    "machine": MACHINE,
    "date": "2026-12-07",
    "typed": "python train.py --model smollm2 --estimator echo --steps 2",
    "exit_status": 0,
    "wall_seconds": 1800.0,
    "peak_gib": 5.5,
    "steps": [
        {
            "step": 1,
            "train/seconds_rollout": 100.0,
            "train/seconds_update": 200.0,
            "train/seconds_per_step": 300.0,
        }
    ],
    "warmup": {"seconds": 900.0, "valid_before": 0.0, "valid_after": 0.95},
    "final_eval": {"eval/resolve_rate": 0.05, "eval/sampled_resolve_rate": 0.25},
    "train_config": {"presets": ["llm", "llm-cpu"], "precision": "auto"},
}


def test_the_section_on_a_cpu_without_bf16_and_the_summary_read_their_files(tmp_path):
    """Each precision's seconds and their ratio, the first run's minutes, peak, steps and result,
    as the files give them; the README's SmolLM2 line names the first run's CPU and precision."""
    (tmp_path / "cpu_precision.json").write_text(json.dumps(PRECISION_FILE))
    before = FIRST_RUN_FILE | {"peak_gib": 7.5, "wall_seconds": 1500.0, "commit": "b" * 40}
    before["train_config"] = FIRST_RUN_FILE["train_config"] | {"micro_tokens": 3072}
    before["warmup"] = FIRST_RUN_FILE["warmup"] | {"warmup": {"batch_tokens": 3072, "seed": 0}}
    now = FIRST_RUN_FILE | {"before": before, "commit": "a" * 40}
    now["train_config"] = FIRST_RUN_FILE["train_config"] | {"micro_tokens": 1536}
    now["warmup"] = FIRST_RUN_FILE["warmup"] | {
        "warmup": {"batch_tokens": 1536, "probe_rows": 16, "seed": 0}
    }
    (tmp_path / "first_run_smollm2.json").write_text(json.dumps(now))
    (tmp_path / "smollm2_step.json").write_text(
        json.dumps(
            {
                "config": {"secrets_per_step": 4, "group_size": 4, "precision": "bf16"},
                "machine": MACHINE | {"cpu_bf16": True},
                "phases": {"rollout": {"seconds": 50.0, "peak_gb": 1.5}},
                "step_seconds": 200.0,
            }
        )
    )
    with report_tables.reading(str(tmp_path)):
        section = "\n".join(report_smollm2.section_smollm2_without_bf16())
        summary = "\n".join(report_results.readme_summary())
    assert "| the warm-up's batch | 40 | 400 | 10 |" in section
    assert "| greedy decode | 10 | 25 | 2.5 |" in section and "median of 3" in section
    assert (
        "Now, at `aaaaaaa`: exit status 0 after 30.0 min; peak resident memory 5.5 GiB" in section
    )
    assert (
        "Before, at `bbbbbbb` on the same machine, with micro_tokens 3072 (now 1536), the "
        "warm-up's probe_rows 0 (now 16): exit status 0 after 25.0 min; peak resident memory "
        "7.5 GiB"
    ) in " ".join(section.split())
    assert "step 1 300.0 s (rollout 100.0, update 200.0)" in section
    assert "greedy 0.05, sampled 0.25" in section and "precision auto" in section
    line = next(x for x in summary.splitlines() if "SmolLM2-135M-Instruct on" in x)
    assert "(LoRA, a step of 4 x 4): 200 s in bf16 (a CPU with bf16)" in line
    assert "empty cache in fp32 (AVX2 without bf16): 30 min, peak 5.5 GiB" in line


KERNELS_FILE = PRECISION_FILE | {
    "command": "python bench/bf16_kernels.py",
    "examples": 4,
    "agreement": {
        "tokens": 40,
        "bf16 in fp32 kernels": {
            "logprob_gap_max": 0.25,
            "logprob_gap_mean": 0.05,
            "gradient_relative_gap": 0.02,
        },
        "fp32": {"logprob_gap_max": 0.5, "logprob_gap_mean": 0.06, "gradient_relative_gap": 0.03},
    },
    "precisions": {
        "fp32": {"warmup_batch_seconds": 40.0, "decode_seconds": 10.0},
        "bf16": {"warmup_batch_seconds": 60.0, "decode_seconds": 12.0},
    },
    "bf16_over_fp32": {"warmup_batch_seconds": 1.5, "decode_seconds": 1.2},
}


def test_the_float32_kernels_part_reads_its_file_and_says_how_to_make_it(tmp_path):
    """bf16 in float32 kernels: each way's gaps to torch's bf16 kernels and each piece's seconds,
    as bench/bf16_kernels.py's file gives them; without the file, the command that makes it."""
    with report_tables.reading(str(tmp_path)):
        absent = "\n".join(report_smollm2.section_smollm2_without_bf16())
    (tmp_path / "bf16_kernels.json").write_text(json.dumps(KERNELS_FILE))
    with report_tables.reading(str(tmp_path)):
        section = "\n".join(report_smollm2.section_smollm2_without_bf16())
    assert "python bench/bf16_kernels.py" in absent and "(40 action tokens)" not in absent
    assert "(40 action tokens)" in " ".join(section.split()) and "median of 2" in section
    assert "| bf16 in fp32 kernels | 0.25 | 0.05 | 0.02 |" in section
    assert "| fp32 | 0.5 | 0.06 | 0.03 |" in section
    assert "| the warm-up's batch | 40 | 60 | 1.5 |" in section


def step_file(phases: dict) -> dict:
    """A file of bench/smollm2_step.py with the given phases."""
    return {
        "config": {"secrets_per_step": 4, "group_size": 4, "n_max": 100}
        | {k: "x" for k in report_smollm2.STEP_SETTINGS},
        "machine": MACHINE,
        "phases": phases,
        "step_seconds": 300.0,
        "threads": 2,
        "train_flags": "",
        "turns": 150,
        "mean_prompt_tokens": 390,
    }


def test_the_step_table_has_a_row_for_each_phase_some_run_measured(tmp_path):
    """A phase the earlier run did not measure shows "-" there; one neither run measured has no
    row."""
    rollout = {"rollout": {"seconds": 100.0, "peak_gb": 2.0}}
    now = step_file(rollout | {"warm-up probe": {"seconds": 70.0, "peak_gb": 3.5}})
    (tmp_path / "smollm2_step.json").write_text(json.dumps(now | {"before": step_file(rollout)}))
    fp32 = step_file(rollout) | {"eval_secrets": 5}
    (tmp_path / "smollm2_step_fp32.json").write_text(json.dumps(fp32))
    with report_tables.reading(str(tmp_path)):
        both = "\n".join(report_smollm2.section_smollm2_cpu_step())
        one = "\n".join(report_smollm2.section_smollm2_cpu_step_fp32())
    assert "| rollout | 100 | 2 | 100 | 2 |" in both
    assert "| warm-up probe | - | - | 70 | 3.5 |" in both
    assert "| rollout | 100 | 2 |" in one and "warm-up probe |" not in one
    assert "390 tokens, the evaluation on 5 secrets" in one and "evaluation on" not in both
    assert "| update |" not in both + one


def test_the_floor_section_sets_the_steps_products_beside_the_fastest_rate(tmp_path):
    """bench/smollm2_step.py --floor: each phase's timed seconds and its products' GFLOP, their rate
    over the phase and their least time at the fastest shape's rate; the step's; the rates; and
    the rate a step of a minute would need."""
    timed = {"rollout": {"seconds": 100.0}, "update": {"seconds": 300.0}}
    floor = {
        "same_episodes": True,
        "gflop": {
            "rollout": {"aten.mm": 3000.0},
            "update": {"aten.mm": 8000.0, "aten.bmm": 1000.0},
        },
        "product_rows": 1536,
        "product_rates": {"MLP up": 150.0, "head": 100.0},
    }
    data = step_file(timed) | {"step_seconds": 400.0, "floor": floor, "compute_dtype": "float32"}
    (tmp_path / report_smollm2.FLOOR).write_text(json.dumps(data))
    with report_tables.reading(str(tmp_path)):
        section = "\n".join(report_smollm2.section_smollm2_cpu_step_floor())
    assert "| rollout | 100 | 3000 | 30 | 20 |" in section
    assert "| update | 300 | 9000 | 30 | 60 |" in section
    assert "| step | 400 | 12000 | 30 | 80 |" in section
    assert "| MLP up | 150 |" in section and "the same episodes" in section
    # 12,000 GFLOP at 150 GFLOP/s is 80 s; a minute needs 200 GFLOP/s
    assert "(150 GFLOP/s, MLP up)" in section and "alone take 80 s" in section
    assert "need them at 200 GFLOP/s, 1.3 times that rate" in section
    assert "computed in float32" in section


def test_no_floor_file_says_how_to_make_it(tmp_path):
    with report_tables.reading(str(tmp_path)):
        section = "\n".join(report_smollm2.section_smollm2_cpu_step_floor())
    assert report_smollm2.FLOOR_COMMAND in section


def test_a_complete_study_heads_results_md_and_the_readme_with_both_question_sets(tmp_path):
    """Once the start and every kept checkpoint are played, RESULTS.md's first lines and the
    README's summary give each policy's held-out greedy, 1..200 greedy and 1..200 sampled resolve,
    in that order, in place of "not yet trained to a result"."""
    import shutil

    results = tmp_path / "results"
    shutil.copytree(report_tables.RESULTS, results)
    study = json.loads((results / "smollm2_study.json").read_text())
    study["step0"] = study_played(0.1, 0.9)
    study["kept"] = {"echo": study_played(0.7, 0.2), "grpo": study_played(0.4, 0.6)}
    study["kept"]["grpo"]["gen200"]["sampled"] = 0.15
    study.pop("replayed", None)  # each kept checkpoint played once, for now
    for run in study["runs"]:  # the chosen runs' kept steps; the others' are not shown
        run["kept_step"] = {"echo": 10, "grpo": 40}[run["estimator"]]
    (results / "smollm2_study.json").write_text(json.dumps(study))
    with report_tables.reading(str(results)):
        head = " ".join(report_results.build().split("### ", 1)[0].split())
        summary = " ".join(" ".join(report_results.readme_summary()).split())
    figures = "the warm-up 10.0 / 5.0 / 5.0, ECHO {}70.0 / 35.0 / 35.0, GRPO {}40.0 / 20.0 / 15.0"
    kept = figures.format("(kept at step 10) ", "(kept at step 40) ")
    assert f"(held-out greedy / 1..200 greedy / 1..200 sampled at T = 1): {kept};" in head
    # the README's summary is short: the kept steps are RESULTS.md's
    plain = figures.format("", "")
    assert f"(held-out greedy / 1..200 greedy / 1..200 sampled): {plain}." in summary
    assert "not yet trained to a result" not in head + summary
    # a kept checkpoint played a second time: the first lines give both plays
    study["replayed"] = {"echo": study_played(0.65, 0.3)}
    (results / "smollm2_study.json").write_text(json.dumps(study))
    with report_tables.reading(str(results)):
        head = " ".join(report_results.build().split("### ", 1)[0].split())
    again = "(played again on the machine of the other plays: 65.0 / 32.5 / 32.5), GRPO"
    assert f"ECHO (kept at step 10) 70.0 / 35.0 / 35.0 {again} (kept at step 40)" in head
