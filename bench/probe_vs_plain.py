"""The smoke probe's matmul figures against independent references, in one run on a GPU machine.

1. ``tests/gpu/expect_here.py`` writes the expectation the GPU tests use (this machine's Python and
   PyTorch, ``smoke.matmul_size`` 4096);
2. ``bench/matmul_plain.py`` (the plain reference: 20 products ``a @ b`` after warm-up, n = 8192);
3. ``envgen_probe.py --expect ... --json``: the whole probe, as an image runs it;
4. ``bench/matmul_plain.py`` again, at the probe's n, to bracket the probe;
5. ``bench/matmul_reference.py`` at the probe's n: the sustained (power-capped) rate, for the probe's
   sustained figure.

Prints a table of probe vs reference per precision and exits 1 when a peak figure is more than
``--tolerance`` (5 %) from the plain reference measured after it.

    python bench/probe_vs_plain.py OUT_DIR
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "envgen" / "smoke" / "probe" / "envgen_probe.py"


def run(argv: list[str], log) -> int:
    log.write("$ " + " ".join(argv) + "\n")
    log.flush()
    began = time.time()
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    log.write(done.stdout)
    log.write(f"[exit {done.returncode}, {time.time() - began:.1f} s]\n\n")
    log.flush()
    sys.stdout.write(done.stdout[-2000:])
    return done.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--tolerance", type=float, default=0.05)
    args = parser.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    py = sys.executable
    with open(out / "probe-vs-plain.log", "w", encoding="utf-8") as log:
        run(["nvidia-smi"], log)
        run(["nvidia-smi", "-q", "-d", "POWER,CLOCK,PERFORMANCE,TEMPERATURE"], log)
        run([py, "-c", "import sys, torch; print(sys.version); print(torch.__version__, torch.version.cuda, "
             "torch.backends.cudnn.version())"], log)
        run([py, str(ROOT / "tests" / "gpu" / "expect_here.py"), str(out / "expect.json")], log)
        run([py, str(ROOT / "bench" / "matmul_plain.py"), "--json", str(out / "plain-before.json")], log)
        probe_rc = run([py, str(PROBE), "--expect", str(out / "expect.json"), "--json",
                        "--out", str(out / "probe.json")], log)
        report = json.loads((out / "probe.json").read_text())
        speed = next(c for c in report["checks"] if c["name"] == "torch.speed")["figures"]
        n = speed["n"]
        run([py, str(ROOT / "bench" / "matmul_plain.py"), "--n", str(n), "--json", str(out / "plain.json")], log)
        run([py, str(ROOT / "bench" / "matmul_reference.py"), "--sizes", str(n), "--repeats", "10",
             "--json", str(out / "sustained.json")], log)
    plain = {r["precision"]: r["tflops"] for r in json.loads((out / "plain.json").read_text())["results"]}
    before = {r["precision"]: r["tflops"] for r in json.loads((out / "plain-before.json").read_text())["results"]}
    sustained = {r["precision"]: r["tflops_median"]
                 for r in json.loads((out / "sustained.json").read_text())["results"]}
    rows = []
    bad = []
    for label, ref in plain.items():
        peak = speed[label + "_tflops"]
        row = {"precision": label, "probe_peak": peak, "plain": ref, "plain_before": before.get(label),
               "ratio": round(peak / ref, 3), "probe_sustained": speed.get(label + "_tflops_sustained"),
               "reference_sustained": sustained.get(label)}
        if row["probe_sustained"] and row["reference_sustained"]:
            row["ratio_sustained"] = round(row["probe_sustained"] / row["reference_sustained"], 3)
        rows.append(row)
        if abs(row["ratio"] - 1) > args.tolerance:
            bad.append(label)
    summary = {"probe_exit": probe_rc, "probe_status": report["status"], "probe_duration_s": report["duration_s"],
               "n": n, "n_profile": speed.get("n_profile"), "tolerance": args.tolerance, "rows": rows,
               "outside_tolerance": bad}
    (out / "compare.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"\nprobe exit {probe_rc} ({report['status']}, {report['duration_s']} s); matmul n={n}")
    print(f"{'prec':<5} {'probe':>8} {'plain':>8} {'ratio':>6} {'plain0':>8} | {'sust.':>8} {'ref':>8} {'ratio':>6}")
    for r in rows:
        print(f"{r['precision']:<5} {r['probe_peak']:8.1f} {r['plain']:8.1f} {r['ratio']:6.3f} "
              f"{r['plain_before'] or 0:8.1f} | {r['probe_sustained'] or 0:8.1f} "
              f"{r['reference_sustained'] or 0:8.1f} {r.get('ratio_sustained', 0):6.3f}")
    print("all peak figures within %.0f %% of the plain reference" % (100 * args.tolerance) if not bad
          else "OUTSIDE tolerance: " + ", ".join(bad))
    return 1 if bad or probe_rc else 0


if __name__ == "__main__":
    sys.exit(main())
