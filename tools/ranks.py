"""One training run on several processes: `torchrun --nproc-per-node K train.py ...`.

ECHO's groups make the split natural: the G rollouts of a secret form the group of Eq. 1, so
the step's B secrets are dealt out to the K ranks (contiguous blocks), each rank plays and
credits its own (groups never span ranks), and only Eq. 2 needs the whole batch: its
minibatches are cut from every rank's turns together (the turns' sort keys are gathered, so
every rank computes the same cut), its normaliser is the minibatch's global number of
(rollout, turn) terms, and the gradients are summed across ranks before the clip and the step,
so every rank takes the same step. Sampling is seeded per (step, secret, rollout), so a seed
plays the same rollouts on any number of ranks. Rank 0 logs, evaluates and checkpoints.

torch.distributed does the communication: gloo on CPUs, NCCL on GPUs, chosen from the device.
We sum the gradients ourselves (one all-reduce of the flattened gradients per optimizer step)
rather than wrapping the model in DistributedDataParallel: ranks hold different numbers of
turns, so their micro-batch counts differ, and DDP requires every rank to run the same number
of backward passes. A plain `python train.py` has one rank and every function here is the
identity on it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class Ranks:
    rank: int = 0
    world: int = 1
    device: str = ""

    @property
    def on(self) -> bool:
        return self.world > 1

    @property
    def main(self) -> bool:
        return self.rank == 0

    def share(self, n: int) -> range:
        """The indices of n items (the step's secrets) this rank plays: a contiguous block."""
        return range(self.rank * n // self.world, (self.rank + 1) * n // self.world)

    def sum(self, values: torch.Tensor) -> torch.Tensor:
        """The element-wise sum over ranks (in place, returned), wherever `values` lives (NCCL
        reduces on the GPU only)."""
        if self.on:
            on_comm = values.to(self.comm_device)
            dist.all_reduce(on_comm, op=dist.ReduceOp.SUM)
            values.copy_(on_comm)
        return values

    def max(self, value: float) -> float:
        if not self.on:
            return value
        t = torch.tensor([value], dtype=torch.float64, device=self.comm_device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return t.item()

    def gather(self, items: list) -> list:
        """Every rank's list, concatenated in rank order, on every rank."""
        if not self.on:
            return items
        out = [None] * self.world
        dist.all_gather_object(out, items)
        return [x for part in out for x in part]

    def sum_gradients(self, params) -> None:
        """grad <- the sum of every rank's grad, for every parameter (one flattened all-reduce)."""
        if not self.on:
            return
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
        flat = torch.cat([g.flatten() for g in grads])
        dist.all_reduce(flat, op=dist.ReduceOp.SUM)
        offset = 0
        for p, g in zip(params, grads):
            p.grad = flat[offset : offset + g.numel()].view_as(g).clone()
            offset += g.numel()

    def barrier(self) -> None:
        if self.on:
            dist.barrier()

    @property
    def comm_device(self) -> str:
        return self.device if self.device.startswith("cuda") else "cpu"


def setup(device: str = "") -> Ranks:
    """The process group of a torchrun launch (WORLD_SIZE > 1), or one rank. On GPUs each rank
    takes the GPU of its LOCAL_RANK and NCCL; on CPUs gloo."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world == 1:
        return Ranks(device=device)
    rank, local = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
    gpu = torch.cuda.is_available() and device in ("", "cuda")
    if gpu:
        torch.cuda.set_device(local)
        device = f"cuda:{local}"
    if not dist.is_initialized():
        dist.init_process_group("nccl" if gpu else "gloo")
    return Ranks(rank, world, device or "cpu")


def finish(ranks: Ranks) -> None:
    if ranks.on and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
