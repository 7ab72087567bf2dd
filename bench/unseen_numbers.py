"""Can a policy trained on 1..100 reach the secrets 101..200 at all? The tiny model gives every
number its own token (tinylm.build_tokenizer), and the binary set's training keeps every universe
inside 1..100 (so that 1..200 tests generalization). A number above 100 then never appears in a
training prompt, nor as a training action: its embedding is trained only by the softmax pushing
every token's logit down, the same push for all of them. If those rows end up as one vector, the
model cannot tell 150 from 170 when it reads the candidates, nor name 150 when it should ask
"greater than 150?", and no estimator can make it bisect past 100.

Paper: App. C, "Bisection as a special case of the EDP objective", and evaluate.py's
"generalization" set (secrets 1..200). Measured, for each checkpoint (tinylm-tokenized models only):
- the mean pairwise cosine of the number tokens' embeddings (" n"), within 1..100 and within
  101..200 (near 1: the rows are one vector);
- greedy play on 1..200: the resolve rate on the secrets 1..100 and on 101..200, and the numbers
  its questions name: the share above 100 and the largest;
- teacher-forced (bisection_behaviour.halving_share): in the Bayes policy's states on the secrets
  1..100 and on 101..200 of the 1..200 game, the share in which the model's own question halves
  C_t (any question that does: "is it even?" halves C_t without naming a number).
    python bench/unseen_numbers.py --checkpoints DIR[,DIR...] [--out FILE]
"""
import os
import re
import sys
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import RESULTS, save_results  # noqa: E402
from cli import arg, fail, parse_config, use_threads  # noqa: E402
import torch  # noqa: E402

import models  # noqa: E402
from bench.bisection_behaviour import checkpoint_played, halving_share  # noqa: E402
from env import CSG, GameConfig  # noqa: E402
from reference import BayesPolicy  # noqa: E402

TRAINED_MAX = 100      # the largest number any binary-set training prompt holds (GameConfig().n_max)


@dataclass
class UnseenConfig:
    checkpoints: str = arg("", "checkpoint directories of tinylm-tokenized models, comma-separated")
    n_max: int = arg(200, "the generalization universe 1..n_max played", at_least=TRAINED_MAX + 2)   # two rows for a cosine
    threads: int = arg(0, "torch threads (0: every core)", at_least=0)
    out: str = arg(os.path.join(RESULTS, "unseen_numbers.json"), "where the figures are written", writes="file")


def mean_pairwise_cosine(rows: torch.Tensor) -> float:
    """The mean cosine between distinct rows (each pair counted once): 1 when all rows point one
    way, about 0 for independent random rows."""
    unit = torch.nn.functional.normalize(rows.double(), dim=1)
    n = len(unit)
    return ((unit @ unit.T).sum() - n).item() / (n * n - n)


def resolved_by_range(resolved: list[bool], secrets: list[int], cut: int) -> tuple[float, float]:
    """(resolve rate on the secrets <= cut, on the secrets > cut)."""
    low = [r for r, s in zip(resolved, secrets) if s <= cut]
    high = [r for r, s in zip(resolved, secrets) if s > cut]
    return sum(low) / len(low), sum(high) / len(high)


def numbers_named(questions: list[str]) -> list[int]:
    """Every number written in the questions ("greater than 64", "divisible by 3", ...)."""
    return [int(x) for q in questions for x in re.findall(r"\d+", q)]


def number_rows(policy, numbers) -> torch.Tensor:
    """The input embeddings of the tokens " n", failing in one sentence for a tokenizer without them."""
    ids = [policy.tokenizer.convert_tokens_to_ids(f" {n}") for n in numbers]
    if any(i is None or i == policy.tokenizer.unk_token_id for i in ids):
        fail("unseen_numbers.py", "this checkpoint's tokenizer has no token per number; the measure is for "
                                  "tinylm-tokenized models (train.py's built-in model)")
    return policy.model.get_input_embeddings().weight.detach()[ids]


def embedding_cosines(policy, n_max: int) -> dict:
    return {"embedding_cosine_trained": mean_pairwise_cosine(number_rows(policy, range(1, TRAINED_MAX + 1))),
            "embedding_cosine_unseen": mean_pairwise_cosine(number_rows(policy, range(TRAINED_MAX + 1, n_max + 1)))}


def played(policy, n_max: int) -> dict:
    """Any respond(game)-policy greedy on 1..n_max, and teacher-forced on the Bayes policy's states."""
    cfg, secrets = GameConfig(question_set="binary", n_max=n_max), list(range(1, n_max + 1))
    game, questions = CSG(secrets, cfg), []
    while game.active:
        questions += [record.question for record in game.step(policy.respond(game))]
    named = numbers_named(questions)
    low, high = resolved_by_range([e.resolved for e in game.episodes], secrets, TRAINED_MAX)
    return {"resolve_trained_range": low, "resolve_unseen_range": high,
            "named_share_unseen": sum(x > TRAINED_MAX for x in named) / max(len(named), 1),
            "largest_named": max(named, default=None),
            "halving_share_trained_range": halving_share(policy, secrets[:TRAINED_MAX], cfg),
            "halving_share_unseen_range": halving_share(policy, secrets[TRAINED_MAX:], cfg)}


def main(argv=None):
    cfg = parse_config(UnseenConfig, argv, description=__doc__.splitlines()[0])
    use_threads(cfg.threads)
    rows = []
    for path in filter(None, cfg.checkpoints.split(",")):
        policy = models.load_policy_for("unseen_numbers.py", path, "cpu", "fp32", trainable=False)
        row = {"checkpoint": checkpoint_played(path), **embedding_cosines(policy, cfg.n_max), **played(policy, cfg.n_max)}
        rows.append(row)
        print(path + ": " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                      for k, v in row.items() if k != "checkpoint"), flush=True)
    if not rows:
        fail("unseen_numbers.py", "give --checkpoints, one or more checkpoint directories")
    bisection = played(BayesPolicy(), cfg.n_max)          # what reaching 101..200 takes
    save_results({"trained_max": TRAINED_MAX, "n_max": cfg.n_max, "rows": rows, "bisection": bisection}, cfg.out)


if __name__ == "__main__":
    main(sys.argv[1:])
