"""The LLM policy pi_theta(a | h): its sampling distribution, batched generation and scoring.

Paper: section 3 "LLM Instantiation" (an autoregressive LLM reads the serialized history h_t,
the selector prompt, and writes a structured action; pi(a | h) is the product of the action's
token probabilities), section 4 (G parallel rollouts per training instance).

Two pieces:
- `process_logits`: the sampling distribution. Temperature, then top-p truncation, renormalised.
  It is used both when sampling and when recomputing log-probs (`LMPolicy.score`), so the
  log pi_old(a | h) in the PPO ratio is the log-prob under the distribution the action was
  actually drawn from (RL libraries that sample with top-p but score untruncated get biased
  ratios). With top_p < 1, a token outside the current top-p set has log-prob -inf (ratio 0).
- `LMPolicy.generate`: all live rollouts advance together: one batched call per turn, prompts
  left-padded, KV cache, position ids counted over real tokens only (the classic left-padding
  bug is giving pad tokens positions). `LMPolicy.score` recomputes the same log-probs with the
  same layout (prompt left-padded, completion right-padded). Both run each distinct prompt once
  (`LMPolicy.prefill`): at turn 0 all B x G rollouts share one prompt, and a policy that has
  converged asks the same first question, so later prompts repeat too.
(rollouts.py plays B secrets x G rollouts with `LMPolicy.generate`, one batched call a turn.)

Models are loaded by lm/models.py; the built-in tiny model is built in lm/tinylm.py.

Departure from the paper, and why: the log-probs Eq. 2's ratio is taken of are those of the
distribution the actions are drawn from, temperature and top-p applied (`process_logits`), not
the model's own softmax, the paper's pi_theta: the ratio then compares pi and pi_old on the
distribution that sampled (the TeX gives no top-p; the paper's code samples at top-p 0.9).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from env import CSG


@dataclass(frozen=True)
class SampleConfig:
    temperature: float = 1.0  # the paper's code's, 1.0 (config.py lists the paper's settings)
    top_p: float = 1.0  # the paper's code's: 0.9; scored under the same truncation either way
    max_new_tokens: int = 48  # an action is ~5 tokens for the tiny model, ~25 for BPE models
    greedy: bool = False  # argmax decoding (evaluation); temperature/top_p are ignored


class JsonScanner:
    """Follows generated text character by character and reports when the first JSON object
    closes: that is the end of the action. Like a stop sequence, it ends the turn there, so the
    action's probability is that of the action's own tokens (the paper's code likewise cut the
    completion at the first balanced JSON), and a model need not learn to stop by itself."""

    def __init__(self):
        self.nesting, self.in_string, self.escaped, self.closed = 0, False, False, False

    def feed(self, text: str) -> bool:
        for c in text:
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif c == "\\":
                    self.escaped = True
                elif c == '"':
                    self.in_string = False
            elif c == '"' and self.nesting > 0:
                self.in_string = True
            elif c == "{":
                self.nesting += 1
            elif c == "}" and self.nesting > 0:
                self.nesting -= 1
                self.closed = self.nesting == 0
                if self.closed:
                    return True
        return False


def process_logits(
    logits: torch.Tensor,
    temperature: float = 1.0,
    top_p: float = 1.0,
    taken: torch.Tensor | None = None,
) -> torch.Tensor:
    """Log-probs of the sampling distribution: softmax(logits / T) kept on the smallest set of
    tokens whose mass reaches top_p (with any token tied with its last), renormalised. (..., V) ->
    (..., V), -inf outside the set. taken (...,): tokens an action holds, kept in the set when
    scoring it. Why: a token sampled at the set's edge can fall just outside it when scored again
    (another pass's rounding, or the bf16 copy that sampled it, lm/engine.py); pi_old of that action
    would be 0 and Eq. 2's log-ratio -inf - (-inf), not a number."""
    logp = torch.log_softmax(logits.float() / temperature, dim=-1)
    if top_p >= 1.0:
        return logp
    # compiled (lm/engine.py's draw): the sort of every row, as asking which rows need one would
    # stop for the host
    few = logp.shape[-1] if torch.compiler.is_compiling() else 8
    drop = logp < nucleus_floor(logp.detach(), top_p, few)
    if taken is not None:
        drop = drop.scatter(-1, taken[..., None], False)
    return torch.log_softmax(logp.masked_fill(drop, float("-inf")), dim=-1)


def nucleus_floor(logp: torch.Tensor, top_p: float, k: int = 8) -> torch.Tensor:
    """(..., V) -> (..., 1): the log-prob of the last token of the top-p set, the tokens in order of
    probability while the mass before each is < top_p. Read from each row's k largest, and from a
    sort of the whole row only where those k hold less than top_p. Why: on a CPU a sort of every
    row's whole vocabulary costs more than the rest of the top-p cut, and a trained policy's set is
    a few tokens."""
    k = min(k, logp.shape[-1])
    top = logp.topk(k, dim=-1).values  # largest first
    p = top.exp()
    mass = p.cumsum(dim=-1)
    last = (mass - p < top_p).sum(-1, keepdim=True) - 1  # the first token is always kept
    floor = top.gather(-1, last)
    short = mass[..., -1] < top_p  # the set goes on past the k-th token
    if k < logp.shape[-1] and short.any():
        floor[short] = nucleus_floor(logp[short], top_p, logp.shape[-1])
    return floor


def inverse_cdf(probs: torch.Tensor, uniforms: torch.Tensor) -> torch.Tensor:
    """Inverse-CDF sampling: each row's first token whose cumulative probability reaches its
    uniform x the row's total. (B, V), (B,) -> (B,). A row's token depends on its own uniform
    alone (engine.blocked_inverse_cdf finds the same token in two levels)."""
    cdf = probs.cumsum(-1)
    return (cdf < uniforms[:, None] * cdf[:, -1:]).sum(-1).clamp(max=probs.shape[-1] - 1)


def sample_next(
    logits: torch.Tensor,
    sample: SampleConfig,
    uniforms: torch.Tensor | None = None,
    generator: torch.Generator | None = None,
    draw=inverse_cdf,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One decoding step's draw from next-token logits (B, V): the tokens (B,), their log-probs
    under the sampling distribution (B,), and its entropy in nats (B,). Greedy takes the argmax;
    given `uniforms` (B,), each row takes the token `draw` finds (inverse_cdf); otherwise
    torch.multinomial draws from `generator`."""
    if sample.greedy:
        logp = torch.log_softmax(logits.float(), dim=-1)
    else:
        logp = process_logits(logits, sample.temperature, sample.top_p)
    probs = logp.exp()
    if sample.greedy:
        tok = logp.argmax(-1)
    elif uniforms is not None:
        tok = draw(probs, uniforms)
    else:
        tok = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
    entropy = -(probs * logp.clamp(min=-1e9)).sum(-1)
    return tok, logp.gather(-1, tok[:, None]).squeeze(-1), entropy


def pad(seqs: list[list[int]], pad_id: int, left: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids, mask), both (N, max_len): pads on the left (prompts) or right (completions)."""
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, s in enumerate(seqs):
        span = slice(width - len(s), width) if left else slice(0, len(s))
        ids[i, span] = torch.tensor(s, dtype=torch.long)
        mask[i, span] = 1
    return ids, mask


def length_buckets(lengths, n: int = 8, waste: float = 0.1) -> list[list[int]]:
    """The indices of `lengths`, shortest first, in groups each padded to its own longest: at
    most n of (nearly) equal count, neighbours joined again while no more than `waste` of the
    joined group would be padding (a forward pass per group costs more than a few pads)."""
    order = sorted(range(len(lengths := list(lengths))), key=lambda i: (lengths[i], i))
    size = -(-len(order) // n)
    groups = []
    for group in (order[k : k + size] for k in range(0, len(order), size)):
        joined = (groups[-1] if groups else []) + group
        padded = len(joined) * max(lengths[i] for i in joined)
        if groups and sum(lengths[i] for i in joined) >= (1 - waste) * padded:
            groups[-1] = joined
        else:
            groups.append(group)
    return groups


def padded_batches(lengths: list[int], most: int, most_tokens: int = 0) -> list[list[int]]:
    """Sequences in the order given (sorted by length, for little padding) cut into batches of
    at most `most` and, where `most_tokens` > 0, at most that many tokens once padded to the
    batch's longest: what a pass with gradient keeps for its backward grows with its tokens, so
    the budget bounds its memory whatever the lengths (a sequence longer than the budget is a
    batch of its own). Returns the positions of each batch's sequences in `lengths`."""
    batches = []
    for i, length in enumerate(lengths):
        batch = batches[-1] if batches else []
        longest = max([length] + [lengths[j] for j in batch])
        if (
            batch
            and len(batch) < most
            and (not most_tokens or (len(batch) + 1) * longest <= most_tokens)
        ):
            batch.append(i)
        else:
            batches.append([i])
    return batches


def shared_prefix(prompts: list[list[int]], least: int = 16) -> int:
    """How many opening tokens every prompt shares, leaving each at least one of its own (its last
    token's logits are its own pass's); 0 where that is fewer than `least` or there is one
    prompt (nothing to share)."""
    if len(prompts) < 2:
        return 0
    shortest = min(len(p) for p in prompts) - 1
    n = 0
    while n < shortest and all(p[n] == prompts[0][n] for p in prompts):
        n += 1
    return n if n >= least else 0


def joined(parts: list) -> tuple:
    """The prefills of several groups of prompts as one: (logits, cache, mask) each, caches and
    masks left-padded to the longest (a masked key is never attended to), rows in group order."""
    from transformers import DynamicCache

    width = max(mask.shape[1] for _, _, mask in parts)
    left = [width - mask.shape[1] for _, _, mask in parts]
    cache = DynamicCache()
    for layer in range(len(parts[0][1].layers)):
        keys, values = zip(*((p[1].layers[layer].keys, p[1].layers[layer].values) for p in parts))
        keys = torch.cat([F.pad(k, (0, 0, n, 0)) for k, n in zip(keys, left)])  # (U, H, L, D)
        values = torch.cat([F.pad(v, (0, 0, n, 0)) for v, n in zip(values, left)])
        cache.update(keys, values, layer)
    mask = torch.cat([F.pad(p[2], (n, 0)) for p, n in zip(parts, left)])
    return torch.cat([p[0] for p in parts]), cache, mask


def positions(mask: torch.Tensor) -> torch.Tensor:
    """Position ids counted over real tokens only: pads never shift the real tokens' positions."""
    return (mask.cumsum(-1) - 1).clamp(min=0)


@dataclass
class Generation:
    prompt_ids: list
    completion_ids: list  # includes the end-of-turn token when the model wrote it
    logprobs: list  # log pi_old of each completion token under process_logits
    text: str  # the completion decoded, special tokens removed
    entropy: float  # mean entropy (nats) of the sampling distribution over its tokens


class LMPolicy:
    """A causal LM and its tokenizer, playing the selector of the Clue Selector Game."""

    def __init__(
        self, model, tokenizer, name: str, compute_dtype: torch.dtype | None = None, decoder=None
    ):
        self.model, self.tokenizer, self.name = model, tokenizer, name
        self.compute_dtype = compute_dtype  # None: float32; torch.bfloat16: autocast
        self.decoder = decoder  # None: eager_decoder; engine.StaticDecoder: a static KV cache
        self.eos_id = tokenizer.eos_token_id
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.eos_id
        self.stop_ids = {self.eos_id}
        self._token_text = None  # text of each token id, for the JsonScanner (built on first use)
        self.plain_scoring = False  # score() in one pass, no shared prompts (CompiledLayers)
        eot = (
            tokenizer.convert_tokens_to_ids("<|im_end|>")
            if "<|im_end|>" in tokenizer.get_vocab()
            else None
        )
        if eot is not None:
            self.stop_ids.add(eot)  # chat models whose turn ends before their eos token

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def autocast(self):
        """The precision every forward pass runs in, sampling and scoring alike, so that the
        log-probs of the two agree (and Eq. 2's first ratio is exactly 1)."""
        return torch.autocast(
            self.device.type,
            dtype=self.compute_dtype or torch.float32,
            enabled=self.compute_dtype is not None,
        )

    def generation_bytes(self, rows: int, tokens: int) -> int:
        """A lower bound on the memory of one batched generation (`generate`) of `rows` prompts
        that reach `tokens` tokens with their completion: the KV cache (layers x keys and values
        x KV heads x head size per token and row) and the next-token logits, taken at least
        three times (logits, their float copy, the probabilities) per row."""
        c = self.model.config
        head = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
        kv_heads = getattr(c, "num_key_value_heads", None) or c.num_attention_heads
        value = 2 if self.compute_dtype == torch.bfloat16 else 4
        return rows * (
            tokens * c.num_hidden_layers * 2 * kv_heads * head * value + 3 * c.vocab_size * 4
        )

    def encode(self, messages_list: list[list[dict]]) -> list[list[int]]:
        """Chat messages -> prompt token ids ending with the assistant turn's opening."""
        texts = [
            self.tokenizer.apply_chat_template(m, tokenize=False, add_generation_prompt=True)
            for m in messages_list
        ]
        return self.tokenizer(texts, add_special_tokens=False)["input_ids"]

    def prefill(self, prompt_ids: list[list[int]]):
        """Run every distinct prompt once and share its KV cache with each turn that has the same
        prompt (at turn 0 every rollout of every secret sees the same prompt). The opening the
        distinct prompts all share (`shared_prefix`: the chat template's system turn, and App.
        B's opening lines or, with prompt_layout "system", all its instructions) runs once, as
        one row, and every prompt's own part carries on from its keys and values (with gradient,
        every row's flows back into it). The prompts' own parts run in groups of alike length
        (`length_buckets`), each left-padded to its own longest only, and the groups' caches are
        joined, left-padded to the longest of all: the padding a mask hides is not computed (a
        turn's history, and so its prompt, can be twice another's).

        Returns (next-token logits (N, V), a KV cache with N rows, the prompts' mask (N, Lp)).
        """
        rows = {}
        index = [rows.setdefault(tuple(p), len(rows)) for p in prompt_ids]  # its distinct prompt
        distinct, parts = list(rows), []
        shared = shared_prefix(distinct)
        opening = None  # the shared opening's keys and values, one row
        if shared:
            opening = self.forward_last(torch.tensor([distinct[0][:shared]]), None)[1]
        buckets = length_buckets([len(p) - shared for p in distinct])
        for bucket in buckets:
            ids, mask = pad([distinct[i][shared:] for i in bucket], self.pad_id, left=True)
            if shared:
                mask = torch.cat([torch.ones(len(bucket), shared, dtype=mask.dtype), mask], 1)
            logits, cache = self.forward_last(ids, mask, opening)
            parts.append((logits, cache, mask.to(self.device)))
        logits, cache, mask = joined(parts)  # the distinct prompts, in bucket order
        row = {i: r for r, i in enumerate(i for bucket in buckets for i in bucket)}
        index = torch.tensor([row[i] for i in index], device=self.device)
        cache.reorder_cache(index)  # (U, ...) -> (N, ...): row i holds its prompt's keys and values
        return logits[index], cache, mask[index]

    def forward_last(self, ids: torch.Tensor, mask: torch.Tensor | None, opening=None) -> tuple:
        """A pass over prompt tokens `ids` (n, L), left-padded as `mask` (n, P + L) says, after
        `opening`'s keys and values (one row, P tokens, shared by the n) where given: (the logits of
        each row's next token (n, V), the KV cache of the n rows). The logits are taken of the
        last position alone, as a (n, hidden) matrix times the head: the model's own
        `logits_to_keep=1` hands its head a (n, 1, hidden) slice that matmul cannot fold into one
        product, and it copies the head's weights once per row."""
        from transformers import DynamicCache

        ids = ids.to(self.device)
        mask = torch.ones_like(ids) if mask is None else mask.to(self.device)
        cache = DynamicCache()
        if opening is not None:  # every row attends to the opening: its one row, seen n times
            rows = (len(ids), -1, -1, -1)
            for layer, kv in enumerate(opening.layers):
                cache.update(kv.keys.expand(*rows), kv.values.expand(*rows), layer)
        inner = self.model.get_base_model() if hasattr(self.model, "get_base_model") else self.model
        kwargs = dict(attention_mask=mask, past_key_values=cache, use_cache=True)
        kwargs["position_ids"] = positions(mask)[:, -ids.shape[1] :]
        with self.autocast():
            if not hasattr(inner, "get_decoder"):  # not a transformers model: its own logits
                out = self.model(input_ids=ids, logits_to_keep=1, **kwargs)
                return out.logits[:, -1], out.past_key_values
            out = inner.get_decoder()(input_ids=ids, **kwargs)
            logits = inner.get_output_embeddings()(out.last_hidden_state[:, -1])  # (n, V)
        return logits, out.past_key_values

    def eager_decoder(self, prompt_ids: list[list[int]], max_new_tokens: int):
        """The reference decoder: `prefill`, then one eager forward per token over a cache that
        grows by a column each step. Returns (next-token logits (B, V), `advance`): advance(tok)
        feeds the sampled tokens (B,) and returns the logits of the next ones. lm/engine.py's static
        decoder has the same shape and must give the same numbers."""
        logits, cache, mask = self.prefill(prompt_ids)  # (B, V), B rows, (B, Lp)
        state = {"mask": mask, "next_pos": positions(mask)[:, -1:] + 1}

        def advance(tok: torch.Tensor) -> torch.Tensor:
            state["mask"] = torch.cat([state["mask"], torch.ones_like(state["mask"][:, :1])], dim=1)
            with self.autocast():
                out = self.model(
                    input_ids=tok[:, None],
                    attention_mask=state["mask"],
                    position_ids=state["next_pos"],
                    past_key_values=cache,
                    use_cache=True,
                ).logits[:, -1]
            state["next_pos"] = state["next_pos"] + 1
            return out

        return logits, advance

    def token_texts(self) -> list[str]:
        """The text of every token id, for the JsonScanner (ids past the tokenizer's, a model's
        padded embedding rows, decode to nothing). Built on first use."""
        if self._token_text is None:
            output = getattr(self.model, "get_output_embeddings", lambda: None)()
            rows = max(len(self.tokenizer), output.weight.shape[0] if output is not None else 0)
            self._token_text = [
                self.tokenizer.decode([i]) if i < len(self.tokenizer) else "" for i in range(rows)
            ]
        return self._token_text

    @torch.no_grad()
    def generate(
        self,
        prompt_ids: list[list[int]],
        sample: SampleConfig = SampleConfig(),
        generator: torch.Generator | list | None = None,
    ) -> list[Generation]:
        """One batched, KV-cached decoding of every prompt (all live rollouts of a turn).
        `generator` (on the policy's device) makes sampling deterministic under a seed: one for
        the batch, or one per prompt (then each row's tokens depend on its own seed alone, not
        on which other rows share the batch: train.py seeds each rollout this way).

        The host learns each step's tokens from one copy (`tok.tolist()`) and keeps every piece
        of bookkeeping (where each action's JSON closes, which rows ended) itself: no other
        value crosses from the device per token. A row that has ended keeps being fed whatever
        it samples; those tokens are cut off below and never touch another row. A decoder with a
        loop of its own (engine.StaticDecoder) runs it instead, and must give the same numbers."""
        if getattr(self.decoder, "generate", None) is not None:
            return self.decoder.generate(self, prompt_ids, sample, generator)
        dev = self.device
        logits, advance = (self.decoder or LMPolicy.eager_decoder)(
            self, prompt_ids, sample.max_new_tokens
        )
        B, texts = logits.shape[0], self.token_texts()
        tokens, logps, ents = [], [], []
        scanners = [JsonScanner() for _ in range(B)]  # the turn ends where the action's JSON closes
        length = [0] * B  # tokens of each action, set when its turn ends
        per_row = isinstance(generator, list) and not sample.greedy
        if per_row:
            # one uniform per possible token from each row's own generator, drawn up front: a row's
            # draws never depend on how long the other rows of the batch keep writing
            uniforms = torch.stack(
                [torch.rand(sample.max_new_tokens, generator=g, device=dev) for g in generator]
            )
        for k in range(sample.max_new_tokens):
            tok, logp, ent = sample_next(
                logits, sample, uniforms[:, k] if per_row else None, None if per_row else generator
            )
            tokens.append(tok)
            logps.append(logp)
            ents.append(ent)
            for b, t in enumerate(tok.tolist()):  # the step's one copy to the host
                if not length[b] and (t in self.stop_ids or scanners[b].feed(texts[t])):
                    length[b] = k + 1  # this turn's action ends with the token just sampled
            if all(length) or k + 1 == sample.max_new_tokens:
                break
            logits = advance(tok)
        return self.generations(
            prompt_ids, *(torch.stack(x, 1) for x in (tokens, logps, ents)), length
        )

    def generations(
        self,
        prompt_ids: list[list[int]],
        tokens: torch.Tensor,
        logps: torch.Tensor,
        ents: torch.Tensor,
        length: list[int],
    ) -> list[Generation]:
        """The Generations of a decoding: tokens, their log-probs and the entropies, each (B,
        steps), and where each row's action ended (0: it did not end within the steps)."""
        tokens, logps, ents = (x.cpu() for x in (tokens, logps, ents))
        gens = []
        for b in range(len(prompt_ids)):
            # The action ends with the stop token or the token that closed its JSON; that token
            # is kept (its probability is part of pi(a|h)), the tokens after it are not.
            n = length[b] or tokens.shape[1]
            comp = tokens[b, :n].tolist()
            gens.append(
                Generation(
                    list(prompt_ids[b]),
                    comp,
                    logps[b, :n].tolist(),
                    self.tokenizer.decode(comp, skip_special_tokens=True),
                    float(ents[b, :n].mean()) if n else 0.0,
                )
            )
        return gens

    def score(
        self,
        prompt_ids: list[list[int]],
        completion_ids: list[list[int]],
        temperature: float = 1.0,
        top_p: float = 1.0,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """log pi_theta of every completion token (with gradient): each distinct prompt once
        (`prefill`), then all completions in one padded pass over the shared KV cache; with
        `plain_scoring` (or checkpointed layers in training) one pass over every prompt and its
        completion instead, with no cache.

        Returns (logprobs, mask), both (N, Lc); logprobs are 0 where mask is 0.
        """
        dev = self.device
        c_ids, c_mask = (t.to(dev) for t in pad(completion_ids, self.pad_id, left=False))
        Lc = c_ids.shape[1]
        if self.plain_scoring or (
            getattr(self.model, "is_activation_checkpointing", False) and self.model.training
        ):
            # checkpointed or compiled layers take no KV cache: one plain pass over prompt +
            # completion
            p_ids, p_mask = (t.to(dev) for t in pad(prompt_ids, self.pad_id, left=True))
            mask = torch.cat([p_mask, c_mask], 1)
            with self.autocast():
                logits = self.model(
                    input_ids=torch.cat([p_ids, c_ids], 1),
                    attention_mask=mask,
                    position_ids=positions(mask),
                    use_cache=False,
                    logits_to_keep=Lc + 1,
                ).logits[:, :-1]  # (N, Lc, V)
        else:
            first, cache, p_mask = self.prefill(prompt_ids)  # (N, V) predicts token 0
            mask = torch.cat([p_mask, c_mask], 1)  # (N, Lp + Lc)
            logits = first[:, None]  # (N, 1, V)
            if Lc > 1:  # completion tokens 0 .. Lc-2 predict tokens 1 .. Lc-1
                with self.autocast():
                    rest = self.model(
                        input_ids=c_ids[:, :-1],
                        attention_mask=mask[:, :-1],
                        position_ids=positions(mask)[:, p_mask.shape[1] : -1],
                        past_key_values=cache,
                        use_cache=True,
                    ).logits  # (N, Lc - 1, V)
                logits = torch.cat([logits, rest], 1)  # (N, Lc, V)
        # Only the completions' own tokens are scored: a padding row's top-p cut (often a whole
        # sort) is wasted work.
        real = c_mask.bool()  # (N, Lc)
        logp = process_logits(logits[real], temperature, top_p, taken=c_ids[real])  # (tokens, V)
        token_logp = torch.zeros(real.shape, dtype=logp.dtype, device=dev)
        token_logp[real] = logp.gather(-1, c_ids[real][:, None]).squeeze(-1)
        return token_logp, real

    def generate_text(
        self, messages_list, greedy=True, temperature=1.0, top_p=1.0, max_new_tokens=64, seed=None
    ) -> list[str]:
        """Texts for a batch of conversations (evaluation): greedy unless greedy=False."""
        gen = torch.Generator(self.device).manual_seed(seed) if seed is not None else None
        sample = SampleConfig(temperature, top_p, max_new_tokens, greedy)
        return [g.text for g in self.generate(self.encode(messages_list), sample, gen)]

    def respond(self, game: CSG) -> list[str]:
        return self.generate_text(game.messages())

    def save(self, path: str | Path) -> None:
        self.model.save_pretrained(path)
        self.tokenizer.save_pretrained(path)
