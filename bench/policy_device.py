"""The trainer's policy on whatever device torch finds: masked log-probs and entropies against
enumeration of a tiny grammar, then one evaluate + backward at the default config, CPU beside CUDA.

    python bench/policy_device.py

Needs only torch, numpy and gymnasium (no tool): it runs on a GPU machine without the tools.
"""

import time
from typing import Annotated, Any

import torch

from toolgym.agents.trainer.policy import Policy, PolicyConfig, pick_device
from toolgym.envs.grammar import STOP, Grammar
from toolgym.envs.tools import Param, ToolRegistry

tiny = ToolRegistry("tiny")


@tiny.tool
def pick(part: Any, colour: Annotated[str, Param(choices=("red", "blue"))]) -> Any:
    """Pick a colour."""


@tiny.tool
def move(
    part: Any,
    dx: Annotated[float, Param("mm", 0.0, 1.0, 0.5)],
    flip: Annotated[str, Param(choices=("yes", "no"))] = "no",
) -> Any:
    """Move."""


def every(grammar, prefix=None):
    prefix = prefix or []
    if len(prefix) == grammar.length:
        return [prefix]
    lo, hi = grammar.allowed(prefix)
    return [s for t in range(lo, hi) for s in every(grammar, [*prefix, t])]


def no_numbers(n, max_numbers, device):
    """A prompt with no numbers in it, as the policy reads one (nothing for the pointer to copy)."""
    return {
        "numbers": torch.zeros(n, max_numbers, device=device),
        "number_at": torch.full((n, max_numbers), -1, dtype=torch.long, device=device),
    }


device = pick_device("auto")
print("device", device, torch.cuda.get_device_name(0) if device.type == "cuda" else "")
torch.manual_seed(0)
grammar = Grammar(tiny, max_points=4)
cfg = PolicyConfig(image_size=16, hidden=32, embed=8, prompt_bytes=16, feedback_bytes=8)
policy = Policy(grammar, cfg).to(device)
seqs = torch.as_tensor(every(grammar), device=device)
obs = {
    "images": torch.randint(0, 255, (1, 6, 16, 16), dtype=torch.uint8, device=device),
    "text": torch.randint(1, 257, (1, 24), device=device),
    "step": torch.zeros(1, dtype=torch.long, device=device),
    **no_numbers(1, cfg.max_numbers, device),
}
batch = {k: v.expand(len(seqs), *v.shape[1:]) for k, v in obs.items()}
with torch.no_grad():
    lp, ent, _ = policy.evaluate(batch, seqs)
    p = lp.double().exp()
    print("sum p over valid calls", round(p.sum().item(), 6), "(want 1)")
    joint = -(p * lp.double()).sum().item()
    print("E[entropy] vs joint", round((p * ent.double()).sum().item(), 6), round(joint, 6))
    tokens, sampled, _, _ = policy.act(obs, torch.Generator(device).manual_seed(3))
    again, _, _ = policy.evaluate(obs, tokens)
    print(
        "sampled vs evaluated log-prob",
        sampled.item(),
        again.item(),
        grammar.valid(tokens[0].tolist()),
    )
    bad = seqs[:1].clone()
    bad[0, -1] = STOP + 5
    print("forbidden token log-prob", policy.evaluate(obs, bad)[0].item())
# CPU against CUDA at the default config: one evaluate + backward on a batch of 256.
for dev in ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]:
    torch.set_num_threads(2)
    cfg = PolicyConfig()
    pol = Policy(grammar, cfg).to(dev)
    n = 256
    ob = {
        "images": torch.randint(
            0, 255, (n, 6, cfg.image_size, cfg.image_size), dtype=torch.uint8, device=dev
        ),
        "text": torch.randint(1, 257, (n, cfg.prompt_bytes + cfg.feedback_bytes), device=dev),
        "step": torch.zeros(n, dtype=torch.long, device=dev),
        **no_numbers(n, cfg.max_numbers, dev),
    }
    s = seqs[torch.randint(len(seqs), (n,))].to(dev)
    opt = torch.optim.Adam(pol.parameters())
    for k in range(6):
        if k == 1:
            if dev == "cuda":
                torch.cuda.synchronize()
            t = time.perf_counter()
        lp, ent, v = pol.evaluate(ob, s)
        (-(lp.mean()) + v.pow(2).mean()).backward()
        opt.step()
        opt.zero_grad()
    if dev == "cuda":
        torch.cuda.synchronize()
    print(
        dev, "evaluate+backward, batch 256:", round((time.perf_counter() - t) / 5 * 1000, 1), "ms"
    )
