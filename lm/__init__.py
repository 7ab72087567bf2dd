"""The language models the policy of policy.py wraps: loading them, LoRA included (models), the
built-in tiny model (tinylm), the fast rollout engine (engine), the format warm-up (warmup),
bf16's products on a CPU without bf16 arithmetic (bf16) and chat models behind an API (api).

It sits above the game and the policy (env, reference, policy, game/, tools/) and below the loop
(train, evaluate, fidelity, experiment), which load their models from here.
"""
