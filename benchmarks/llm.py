"""Per-decision latency of the LLM policy's decoding: ``generate`` (the reference's sampling) vs ``score``.

    .venv/bin/python -m benchmarks.llm --shape tiny --device cpu --threads 1   # anywhere, in about a minute
    .venv/bin/python -m benchmarks.llm --shape 4b                              # on a GPU machine (CI never runs this)

Builds a random-weight Qwen3 model — ``--shape 4b`` has Qwen3-4B-Instruct-2507's exact shape (hidden 2560, 36
layers, 32 heads / 8 KV heads, head dim 128, intermediate 9728, vocabulary 151936, tied embeddings) — adds a LoRA
adapter (r=32 on all seven linear projections, lora_B randomised so it is really active), saves both, and loads them
through the project's own loader (``wolfeclick.llm.loading``: nf4 via bitsandbytes on CUDA by default). It then
times, with prompt lengths of real battles:

- ``score``      one decision: shared-prefill scoring of every legal action (``wolfeclick.llm.scoring``);
- ``score×N``    N battles' decisions in one batched pass (amortised per decision);
- ``generate``   our seeded sampler with the reference's settings (k=4, 24 new tokens, T=0.3, top-p 0.95, top-k 20);
- ``generate×N`` the same, N battles batched;
- ``hf-generate`` the reference's own ``model.generate`` call, one decision;
- ``batcher×N``  N threads deciding in a closed loop through the real ``Batcher`` (queueing and gathering included).

Prompt lengths: ``--recordings DIR`` takes ``prompt_tokens`` from recorded LLM decisions (made with the real
tokenizer); otherwise lengths come from the v1 golden battles' prompts (``tests/data/llm_v1_golden.json.gz``) at
``--chars-per-token`` (default 3.0, an estimate for Qwen's tokenizer on this text). Goals (4B shape, nf4, adapter
active, CUDA): ≤ 60 ms per decision for one battle and ≤ 15 ms amortised over 16 battles, in ``score`` mode.
The tiny shape's runs are the ``llm`` benchmark (section "LLM decisions: tiny shape on cpu"), the 4B shape's
``llm_4b`` ("LLM decisions: 4b shape on cuda"; ``benchmarks.llm_4b``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from benchmarks import harness

logging.getLogger("bitsandbytes").setLevel(logging.ERROR)

NAME = "llm"
HEADING = "## LLM decisions: tiny shape on cpu"
SHAPES: dict[str, dict[str, Any]] = {
    "4b": dict(hidden_size=2560, num_hidden_layers=36, num_attention_heads=32, num_key_value_heads=8, head_dim=128,
               intermediate_size=9728, vocab_size=151936, tie_word_embeddings=True, max_position_embeddings=40960,
               rope_theta=5_000_000.0),
    "tiny": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                 intermediate_size=128, vocab_size=4096, tie_word_embeddings=True, max_position_embeddings=4096),
}
LORA_MODULES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
GOLDEN = harness.ROOT / "tests" / "data" / "llm_v1_golden.json.gz"
V1_OVERHEAD_CHARS = 330  # system prompt + chat template around the user message
CANDIDATE_CHARS = 44     # '{"action": "move", "choice": "closecombat"}'


def build_checkpoint(shape: str, folder: Path, device: str, lora_r: int, seed: int) -> tuple[Path, Path]:
    """Random-weight base (bf16 on CUDA, fp32 on CPU) and a LoRA adapter, saved under ``folder``."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(seed)
    config = Qwen3Config(**SHAPES[shape], bos_token_id=None, eos_token_id=2, pad_token_id=0)
    dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
    with torch.device(device):
        built: Any = Qwen3ForCausalLM(config)  # transformers' own annotations of .to() do not fit a dtype
        model = built.to(dtype).eval()
    base, adapter = folder / "base", folder / "adapter"
    model.save_pretrained(base)
    peft_model = get_peft_model(model, LoraConfig(r=lora_r, lora_alpha=lora_r, target_modules=LORA_MODULES,
                                                  lora_dropout=0.0))
    with torch.no_grad():
        for name, param in peft_model.named_parameters():
            if "lora_B" in name:
                param.normal_(0.0, 0.02)
    peft_model.save_pretrained(str(adapter))
    del peft_model, model
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
    return base, adapter


def prompt_lengths(recordings: str | None, chars_per_token: float) -> tuple[list[int], list[int], str]:
    """(prompt token counts, candidate counts, where they came from)."""
    if recordings:
        tokens, counts = [], []
        for path in sorted(Path(recordings).glob("*.json")):
            data = json.loads(path.read_text())
            for turn in data.get("turns", []):
                for decision in turn.get("decisions", {}).values():
                    info = decision.get("policy_info") or {}
                    if info.get("prompt_tokens"):
                        tokens.append(int(info["prompt_tokens"]))
                        counts.append(max(1, len(info.get("candidates") or decision.get("legal_actions") or [1])))
        if tokens:
            return tokens, counts, f"{len(tokens)} recorded decisions in {recordings}"
    with gzip.open(GOLDEN, "rt") as handle:
        battles = json.load(handle)["battles"]
    users = [u for b in battles for u in b["expected"]]
    tokens = [round((len(u) + V1_OVERHEAD_CHARS) / chars_per_token) for u in users]
    counts = [sum(1 for line in u.splitlines() if line.startswith("- action: ")) for u in users]
    return tokens, counts, f"{len(users)} v1 golden prompts at {chars_per_token} chars/token"


def sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def timed(fn: Callable[[], Any], device: str) -> float:
    sync(device)
    started = time.perf_counter()
    fn()
    sync(device)
    return (time.perf_counter() - started) * 1000.0


def summary(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 2), "mean": round(statistics.fmean(values), 2),
            "p90": round(harness.percentile(values, 0.9), 2), "n": len(values)}


def run(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    from wolfeclick.llm.batcher import Batcher, run_requests
    from wolfeclick.llm.checkpoint_specs import REFERENCE_SAMPLING, parse_spec, resolve_checkpoint
    from wolfeclick.llm.generation import GenerateRequest
    from wolfeclick.llm.loading import ModelCache, choose_device
    from wolfeclick.llm.scoring import ScoreRequest, reference_scores, score_requests

    device = choose_device(args.device)
    if args.threads:
        torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    lengths, counts, source = prompt_lengths(args.recordings, args.chars_per_token)
    vocab = SHAPES[args.shape]["vocab_size"]
    cand_len = round(CANDIDATE_CHARS / args.chars_per_token) + 1  # + end token

    def decision() -> tuple[list[int], list[list[int]]]:
        i = rng.randrange(len(lengths))
        prompt = [rng.randrange(10, vocab) for _ in range(lengths[i])]
        stem = [rng.randrange(10, vocab) for _ in range(cand_len - 4)]  # shared '{"action": "move", "choice": "'
        cands = [stem + [rng.randrange(10, vocab) for _ in range(rng.choice((3, 4, 4, 5)))] + [2]
                 for _ in range(max(1, counts[i]))]
        return prompt, cands

    folder = Path(args.workdir or tempfile.mkdtemp(prefix="wolfeclick-bench-"))
    started = time.perf_counter()
    base, adapter = build_checkpoint(args.shape, folder, device, args.lora_r, args.seed)
    built_s = time.perf_counter() - started
    cache = ModelCache(max_bases=1)
    started = time.perf_counter()
    handle = cache.get(resolve_checkpoint(parse_spec(f"llm:{base}+{adapter}")), device=device, quant=args.quant)
    load_s = time.perf_counter() - started
    entry, model = handle.entry, handle.entry.model
    ckpt_adapter = handle.checkpoint.adapter
    report: dict[str, Any] = {
        "shape": args.shape, "device": device, "quant": entry.quant, "dtype": entry.dtype, "lora_r": args.lora_r,
        "gpu": torch.cuda.get_device_name(0) if device.startswith("cuda") else None,
        "torch_threads": torch.get_num_threads(), "prompts": source,
        "prompt_tokens": summary([float(x) for x in lengths]),
        "candidates_per_decision": summary([float(c) for c in counts]),
        "candidate_tokens": cand_len, "build_s": round(built_s, 1), "load_s": round(load_s, 1), "results": {},
    }
    if device.startswith("cuda"):
        report["gpu_memory_gb"] = round(torch.cuda.memory_allocated() / 2**30, 2)
    results = report["results"]

    # correctness: the shared-cache scores equal one-at-a-time scoring
    prompt, cands = decision()
    shared = score_requests(model, [ScoreRequest(prompt, cands, ckpt_adapter)], [handle.adapter], 0)[0]
    separate = reference_scores(model, prompt, cands, handle.adapter)
    report["score_check_max_abs_diff"] = max(abs(sum(a) - sum(b)) for a, b in zip(shared, separate))

    gen_kw: dict[str, Any] = {k: REFERENCE_SAMPLING[k] for k in ("samples", "max_new_tokens", "temperature", "top_p", "top_k")}

    def score_batch(n: int) -> Callable[[], Any]:
        reqs = [ScoreRequest(*decision(), adapter=ckpt_adapter) for _ in range(n)]
        return lambda: run_requests(entry, reqs)

    def generate_batch(n: int) -> Callable[[], Any]:
        reqs = [GenerateRequest(decision()[0], seed=rng.randrange(2**31), adapter=ckpt_adapter, **gen_kw)
                for _ in range(n)]
        return lambda: run_requests(entry, reqs)

    def hf_generate() -> Callable[[], Any]:
        prompt = decision()[0]
        ids = torch.tensor([prompt], device=model.get_input_embeddings().weight.device)
        model.set_adapter(handle.adapter)

        def go() -> Any:
            with torch.inference_mode():
                return model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                                      max_new_tokens=gen_kw["max_new_tokens"],
                                      num_return_sequences=gen_kw["samples"], do_sample=True,
                                      temperature=gen_kw["temperature"], top_p=gen_kw["top_p"], top_k=gen_kw["top_k"],
                                      pad_token_id=0, eos_token_id=2)
        return go

    batch = args.batch
    plans = [("score", lambda: score_batch(1), 1), (f"score x{batch}", lambda: score_batch(batch), batch),
             ("generate", lambda: generate_batch(1), 1), (f"generate x{batch}", lambda: generate_batch(batch), batch)]
    if not args.skip_hf:
        plans.append(("hf-generate", hf_generate, 1))
    for name, make, per in plans:
        for _ in range(args.warmup):
            timed(make(), device)
        times = [timed(make(), device) / per for _ in range(args.decisions)]
        results[name] = summary(times)
        print(f"{name:>14}: median {results[name]['median']:8.2f} ms/decision  (p90 {results[name]['p90']:.2f}, "
              f"n={len(times)})", flush=True)

    # the real Batcher: `batch` threads deciding in a closed loop
    batcher = Batcher(entry, window_ms=args.window_ms)
    per_thread = max(1, args.decisions // 2)
    requests = [[ScoreRequest(*decision(), adapter=ckpt_adapter) for _ in range(per_thread)] for _ in range(batch)]
    sizes: list[int] = []

    def worker(i: int) -> None:
        for request in requests[i]:
            sizes.append(batcher.run(request, client=i).batch_size)

    batcher.run(requests[0][0], client="warmup")
    sync(device)
    started = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(batch)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sync(device)
    wall = (time.perf_counter() - started) * 1000.0
    results[f"batcher x{batch}"] = {"amortised_ms": round(wall / (batch * per_thread), 2),
                                    "mean_batch": round(statistics.fmean(sizes), 2), "n": batch * per_thread}
    print(f"{'batcher x' + str(batch):>14}: {results[f'batcher x{batch}']['amortised_ms']:8.2f} ms/decision amortised "
          f"(mean batch {results[f'batcher x{batch}']['mean_batch']})", flush=True)

    score_1, score_n = results["score"]["median"], results[f"score x{batch}"]["median"]
    report["score_not_slower_than_generate"] = score_1 <= results["generate"]["median"]
    if args.shape == "4b" and device.startswith("cuda"):
        report["goals"] = {"score_1_battle_le_60ms": score_1 <= 60.0, f"score_{batch}_battles_le_15ms": score_n <= 15.0}
    return report


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = harness.parser(__doc__.split("\n\n")[0])
    parser.add_argument("--shape", choices=sorted(SHAPES), default="4b")
    parser.add_argument("--quant", choices=["none", "nf4", "int8"], default=None,
                        help="default: nf4 on CUDA, none on CPU (the loader's own default)")
    parser.add_argument("--device", default=None, help="cpu, cuda or cuda:N (default: cuda when available)")
    parser.add_argument("--decisions", type=int, default=20, help="timed repetitions per measurement")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--batch", type=int, default=16, help="battles in flight for the batched measurements")
    parser.add_argument("--lora-r", type=int, default=32)
    parser.add_argument("--recordings", default=None, help="take prompt lengths from these recordings")
    parser.add_argument("--chars-per-token", type=float, default=3.0)
    parser.add_argument("--window-ms", type=float, default=4.0, help="the batcher's gathering window")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument("--skip-hf", action="store_true", help="skip the reference's model.generate timing")
    parser.add_argument("--workdir", default=None, help="where to write the random checkpoint (default: a temp dir)")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def render(result: harness.Result) -> str:
    """The report as its docs/benchmarks.md section (the tiny shape's; ``benchmarks.llm_4b`` heads the 4B one)."""
    return section(HEADING, result)


def section(heading: str, result: harness.Result) -> str:
    report = result.results
    machine = report.get("gpu") or f"{report['device']}, {report['torch_threads']} torch thread(s)"
    lines = [
        heading, "",
        f"`{result.command}` on {machine}; {report['quant']} weights ({report['dtype']}), LoRA r={report['lora_r']} "
        f"active; prompts: {report['prompts']} (median {report['prompt_tokens']['median']:.0f} tokens, median "
        f"{report['candidates_per_decision']['median']:.0f} legal actions).", "",
        harness.describe(result), "",
        "| decoding | ms per decision (median) | p90 |", "| --- | --- | --- |",
    ]
    for name, row in report["results"].items():
        if "median" in row:
            lines.append(f"| {name} | {row['median']:.1f} | {row['p90']:.1f} |")
        else:
            lines.append(f"| {name} (amortised, mean batch {row['mean_batch']}) | {row['amortised_ms']:.1f} | – |")
    lines += ["", f"`score` not slower than `generate`: {report['score_not_slower_than_generate']}; shared-prefill "
              f"scores match separate scoring within {report['score_check_max_abs_diff']:.1e}."]
    if "goals" in report:
        lines.append(f"Goals: {report['goals']}.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with harness.measure() as measured:
        report = run(args)
    params = {k: v for k, v in vars(args).items() if k not in ("results", "workdir")}
    harness.finish("llm_4b" if args.shape == "4b" else NAME, argv, params, report, measured, args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
