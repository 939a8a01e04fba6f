"""Benchmark: JEPA step time per profile and condition, achieved GFLOP/s, projected sweep time.

    python benchmarks/bench_training.py                  # cpu and study profiles
    python benchmarks/bench_training.py --profiles cpu --steps 30

Runs on one thread (as each sweep worker does). For each profile it times training steps
of the conditions (after warm-up steps), counts the FLOPs of one step with
``torch.utils.flop_counter`` (forward and backward; matmuls, convolutions, attention),
and compares the achieved rate with float32 GEMM rates measured in the same run: one GEMM
of the encoder's own shape (tokens x width x 4 width) and one square 1024^3 GEMM. The
projected sweep time is ``sum over conditions of 5 seeds x steps x step time``, plus the
evaluations (timed once: embedding the 2,983 labelled images, with and without probes),
divided by the number of workers. Two workers side by side share memory bandwidth, and the
machine is shared, so treat the projection as a lower bound and compare it with a real run.

At the length where the seven conditions are compared (the declared substrate,
:func:`embdiag.training.ladder.substrate_length` of the committed records), it prints each
condition's projected minutes per run on one worker beside the median wall time of the
committed runs at that length (the peer: real runs, measured while other work shared the cores).
"""

from __future__ import annotations

import argparse
import time

import pandas as pd
import torch
from torch.utils.flop_counter import FlopCounterMode

from embdiag.training import ladder, losses, sweep
from embdiag.training.conditions import CONDITIONS, SEEDS
from embdiag.training.config import profile
from embdiag.training.loop import _optimizer, batch_indices, build_models, lr_at, step_losses
from embdiag.training.masks import sample_masks
from embdiag.training.models import Encoder
from embdiag.training.seeding import torch_generator


def gemm_rate(m: int, k: int, n: int, seconds: float = 1.0) -> float:
    """float32 GFLOP/s of ``(m x k) @ (k x n)`` on the current thread count."""
    a, b = torch.randn(m, k), torch.randn(k, n)
    a @ b
    reps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        a @ b
        reps += 1
    return 2 * m * k * n * reps / (time.perf_counter() - t0) / 1e9


def _step(cfg, cond, models, opt, pool, step):
    m = sample_masks(cfg.masks, cfg.model.grid, cfg.batch_size, 0, step)
    images = pool[torch.from_numpy(batch_indices(len(pool), cfg.batch_size, 0, step))]
    d = None
    if cond.sigreg:
        dim = cfg.model.projector_dim if cond.projector else cfg.model.width
        d = losses.random_directions(dim, cfg.n_directions, torch_generator(0, "sigreg", step))
    for g in opt.param_groups:
        g["lr"] = lr_at(step, cfg)
    out = step_losses(
        models, cond, images, torch.from_numpy(m.context), torch.from_numpy(m.targets), d, cfg.sigreg_weight
    )
    opt.zero_grad(set_to_none=True)
    out.loss.backward()
    torch.nn.utils.clip_grad_norm_(models.parameters(), cfg.clip)
    opt.step()


def time_condition(cfg, cond, n_steps: int, warmup: int = 3) -> dict:
    models = build_models(cfg, cond, 0)
    opt = _optimizer(models, cfg)
    pool = torch.randn(max(cfg.batch_size * 4, 256), 3, cfg.model.image_size, cfg.model.image_size)
    with FlopCounterMode(display=False) as counter:
        _step(cfg, cond, models, opt, pool, 0)
    flops = counter.get_total_flops()
    for s in range(1, warmup):
        _step(cfg, cond, models, opt, pool, s)
    t0 = time.perf_counter()
    for s in range(warmup, warmup + n_steps):
        _step(cfg, cond, models, opt, pool, s)
    dt = (time.perf_counter() - t0) / n_steps
    return {"seconds_per_step": dt, "gflop_per_step": flops / 1e9, "gflop_s": flops / dt / 1e9}


def eval_seconds(cfg, n_images: int = 2983) -> float:
    """Seconds to embed the labelled images (timed on 500, scaled)."""
    enc = Encoder(cfg.model).eval()
    x = torch.randn(500, 3, cfg.model.image_size, cfg.model.image_size)
    with torch.no_grad():
        enc.pool(x[:50])
        t0 = time.perf_counter()
        enc.pool(x)
    return (time.perf_counter() - t0) * n_images / 500


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", nargs="+", default=["cpu", "study"])
    parser.add_argument("--steps", type=int, default=20, help="timed steps per condition (cpu; study uses 3)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--probe-seconds",
        type=float,
        default=10.0,
        help="measured cost of the final probes of one run (3 attributes; see the sweep log)",
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    shape_rates = {}
    rows = []
    for name in args.profiles:
        cfg = profile(name)
        tokens = cfg.batch_size * cfg.model.n_patches
        shape_rates[name] = gemm_rate(tokens, cfg.model.width, 4 * cfg.model.width)
        n = args.steps if name != "study" else 3
        for cond in CONDITIONS:
            r = time_condition(cfg, cond, n)
            rows.append(
                {
                    "profile": name,
                    "condition": cond.name,
                    "EMA": cond.ema,
                    "stop-grad": cond.stop_gradient,
                    "SIGReg": cond.sigreg,
                    "ms/step": 1000 * r["seconds_per_step"],
                    "GFLOP/step": r["gflop_per_step"],
                    "GFLOP/s": r["gflop_s"],
                    "% of shape GEMM": 100 * r["gflop_s"] / shape_rates[name],
                }
            )
            print(
                f"  {name:6s} {cond.name:36s} {1000 * r['seconds_per_step']:8.1f} ms/step  {r['gflop_s']:6.1f} GFLOP/s",
                flush=True,
            )
    square = gemm_rate(1024, 1024, 1024)
    df = pd.DataFrame(rows)
    with pd.option_context("display.width", 160, "display.float_format", "{:.1f}".format):
        print(df.to_string(index=False))
    print(
        f"\nGEMM float32, one thread: 1024^3 {square:.1f} GFLOP/s; encoder shape (tokens x width x 4 width): "
        + ", ".join(f"{k} {v:.1f}" for k, v in shape_rates.items())
        + " GFLOP/s"
    )
    for name in args.profiles:
        cfg = profile(name)
        sub = df[df["profile"] == name]
        n_evals = cfg.steps // cfg.eval_every + (cfg.steps % cfg.eval_every > 0)
        per_run_eval = n_evals * eval_seconds(cfg) + args.probe_seconds
        train_s = len(SEEDS) * cfg.steps * sub["ms/step"].sum() / 1000
        total = (train_s + len(SEEDS) * (len(CONDITIONS) + 1) * per_run_eval) / args.workers
        print(
            f"{name}: 35 runs x {cfg.steps} steps + untrained references on {args.workers} workers: "
            f"about {total / 60:.0f} min ({train_s / 60 / args.workers:.0f} min training, "
            f"{per_run_eval:.0f} s evaluation per run)"
        )

    if "cpu" in args.profiles:
        per_run_at_substrate(df[df["profile"] == "cpu"], args.probe_seconds)


def per_run_at_substrate(timed: pd.DataFrame, probe_seconds: float) -> None:
    """Projected minutes per run of each condition at the substrate length (one worker), beside
    the median wall minutes of the committed runs there."""
    steps = ladder.substrate_length(ladder.substrate(ladder.ladder_records("cpu")))
    if steps is None:
        print("no training length meets the declared substrate criterion yet")
        return
    cfg = profile("cpu")
    evaluation = (steps // cfg.eval_every + (steps % cfg.eval_every > 0)) * eval_seconds(cfg) + probe_seconds
    records = sweep.load_records(f"cpu-steps{steps}")
    done = records[(records["status"] == "ok") & ~records["stale"].astype(bool)]
    rows = []
    for _, r in timed.iterrows():
        wall = done.loc[done["condition"] == r["condition"], "wall_seconds"].astype(float)
        rows.append(
            {
                "condition": r["condition"],
                "projected min/run": (steps * r["ms/step"] / 1000 + evaluation) / 60,
                "committed runs": len(wall),
                "measured median min/run": wall.median() / 60 if len(wall) else float("nan"),
            }
        )
    table = pd.DataFrame(rows)
    print(f"\nper run at the substrate length, {steps:,} steps, one single-threaded worker:")
    with pd.option_context("display.width", 160, "display.float_format", "{:.1f}".format):
        print(table.to_string(index=False))
    print(
        f"all {len(table) * len(SEEDS)} runs on two workers: about "
        f"{len(SEEDS) * table['projected min/run'].sum() / 2 / 60:.1f} h projected"
    )


if __name__ == "__main__":
    main()
