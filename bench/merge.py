#!/usr/bin/python3
"""Joins `tjit bench --json` and `bench/torch_ref.py --json` files into one table.

    /usr/bin/python3 bench/merge.py FILE.json... [--results bench/RESULTS.md]
        [--svg bench/results.svg] [--command TEXT]... [--note TEXT]

Each FILE is a tjit or a PyTorch result file (told apart by their "tool" key);
several of each are concatenated (bench/compare.sh writes one pair per
workload and thread count, run back to back so that each tjit/PyTorch ratio
is taken minutes apart at most). Prints the table; with --results replaces
the section between the markers below in that Markdown file (appending it
the first time) and leaves the rest of the file alone; with --svg writes a
bar chart of the speed-ups over PyTorch.

Speed-up over PyTorch = PyTorch's median time / tjit's (for GB/s and GFLOP/s
figures: tjit's / PyTorch's): above 1 tjit is faster.
"""
import argparse
import json
import math
import sys
import time
from xml.sax.saxutils import escape

BEGIN = "<!-- merge.py: begin (generated; edit bench/merge.py instead) -->"
END = "<!-- merge.py: end -->"
MODES = ("eager", "traced", "decomposed")
MODELS = ("mlp", "cnn", "gpt", "block768", "mlp_b1")
# Micro-benchmark results (name == what), in table order: (name, label, the
# PyTorch result it is compared with or None). Allocating and preallocated
# variants (models/bench_ops.c, bench/torch_ref.py: NAME and NAME_out).
MICRO = [
    ("dispatch", "dispatch: add f32[1] into a new tensor", "dispatch"),
    ("dispatch_mode", "dispatch with one pass-through mode", None),
    ("copy", "copy 64 MiB (memcpy / copy_)", "copy"),
    ("gelu", "gelu f32[16Mi], allocating", "gelu"),
    ("gelu_out", "gelu, preallocated output", "gelu_out"),
    ("softmax", "softmax f32[4096,1024], allocating", "softmax"),
    ("softmax_out", "softmax, preallocated output", "softmax_out"),
    ("layer_norm", "layer_norm f32[4096,1024], allocating", "layer_norm"),
    ("layer_norm_out", "layer_norm, preallocated output", "layer_norm_out"),
    ("mm", "mm 1024^3", "mm"),
    ("mm_cblas", "mm: cblas_sgemm called directly", None),
    ("sdpa", "sdpa [1,12,128,64] causal, fused", "sdpa_decomp"),
    ("sdpa_decomp", "sdpa as matmul-softmax-matmul", "sdpa_decomp"),
    ("trace", "trace (make_fx gpt step, fake)", "trace"),
]

# Issue 3's PyTorch 1.13 figures on a quiet machine (GB/s, 1 / 2 threads) and
# the memcpy-style copy: targets are min(2x PyTorch, 80% of memcpy).
ISSUE_PYTORCH = {"gelu": (0.67, 0.91), "gelu_out": (10.6, 19.9), "softmax": (8.9, 11.2), "softmax_out": (8.9, 11.2),
                 "layer_norm": (15.9, 21.9), "layer_norm_out": (15.9, 21.9)}
ISSUE_MEMCPY = (40.0, 64.0)

# Issue 8's speed targets: (workload, step, tjit mode, threads, PyTorch mode, minimum speed-up)
TARGETS = [
    ("mlp", "train", "traced", 1, "pytorch", 1.4),
    ("cnn", "train", "traced", 1, "pytorch", 1.1),
    ("gpt", "train", "traced", 1, "pytorch", 1.5),
    ("block768", "forward", "traced", 1, "pytorch", 1.15),
    ("mlp_b1", "forward", "traced", 1, "pytorch", 3.0),
]


def load(paths):
    tjit, torch, meta = [], [], {"tjit": [], "pytorch": []}
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        tool = d.get("tool")
        if tool == "tjit":
            # a run with OMP_WAIT_POLICY=passive: its modes become eager_passive, ...
            suffix = "_passive" if d.get("omp_wait_policy") == "passive" else ""
            tjit += [dict(r, mode=r["mode"] + suffix) for r in d["results"]]
        elif tool == "pytorch":
            torch += d.get("results", [])
        else:
            sys.exit(f"merge.py: {p} is neither a tjit nor a PyTorch result file")
        meta[tool].append(d)
    return tjit, torch, meta


class Index:
    def __init__(self, results):
        self.d = {(r["name"], r["what"], r["mode"], r["threads"]): r for r in results}

    def get(self, name, what, mode, threads):
        return self.d.get((name, what, mode, threads))


def speedup(tj, pt):
    """PyTorch time / tjit time (or tjit throughput / PyTorch throughput)."""
    if not tj or not pt:
        return None
    if "/" in tj["unit"]:
        return tj["value"] / pt["value"]
    return pt["median_ms"] / tj["median_ms"]


def cpu_speedup(tj, pt):
    """The same from the calling thread's CPU time (1 thread: time descheduled excluded)."""
    if not tj or not pt or not tj.get("cpu_ms") or not pt.get("cpu_ms"):
        return None
    return pt["cpu_ms"] / tj["cpu_ms"]


def fmt(r):
    if not r:
        return "n/a"
    v = r["value"]
    return f"{v:.3g} {r['unit']}" if v < 100 else f"{v:.0f} {r['unit']}"


def fx(x, bold_below=None):
    if x is None:
        return "n/a"
    s = f"{x:.2f}x"
    return f"**{s}**" if bold_below is not None and x < bold_below else s


def faults(r):
    return "n/a" if not r else f"{r['faults_per_call']:.1f}"


def mib(r):
    return "" if not r or "arena_bytes" not in r else f"{r['arena_bytes'] / 1048576:.2f}"


def model_rows(tj, pt, threads):
    rows = []
    for name in MODELS:
        for what in ("forward", "train"):
            m = [tj.get(name, what, mode, threads) for mode in MODES]
            if not any(m):
                continue
            p, pp = pt.get(name, what, "pytorch", threads), pt.get(name, what, "pytorch_passive", threads)
            e, t, d = m
            tp = tj.get(name, what, "traced_passive", threads)
            rows.append({
                "label": f"{name} {what}", "name": name, "what": what, "tjit": m, "pytorch": p, "passive": pp,
                "traced_passive": tp,
                "traced_eager": t["median_ms"] / e["median_ms"] if e and t else None,
                "decomp_traced": d["median_ms"] / t["median_ms"] if d and t else None,
                "sp_traced": speedup(t, p), "sp_eager": speedup(e, p), "sp_decomp": speedup(d, p),
                "sp_traced_passive": speedup(tp, pp), "sp_traced_cpu": cpu_speedup(t, p),
                "sp_eager_cpu": cpu_speedup(e, p),
            })
    return rows


def cpu_value(r):
    """The figure from the calling thread's CPU time (1 thread: all the work)."""
    if not r or not r.get("cpu_ms"):
        return None
    if "/" in r["unit"]:
        return r["value"] * r["median_ms"] / r["cpu_ms"]
    return r["value"] * r["cpu_ms"] / r["median_ms"]


def micro_rows(tj, pt, threads):
    rows = []
    copy = tj.get("copy", "copy", "eager", threads)
    for name, label, pt_name in MICRO:
        mode = "fake+core" if name == "trace" else "eager"
        t = tj.get(name, name, mode, threads)
        if not t:
            continue
        p = pt.get(pt_name, pt_name, "pytorch+fake" if name == "trace" else "pytorch", threads) if pt_name else None
        pp = pt.get(pt_name, pt_name, "pytorch_passive", threads) if pt_name else None
        tp = tj.get(name, name, mode + "_passive", threads)
        # against the copy of the same run: from the thread CPU times with 1 thread
        value = (lambda r: cpu_value(r)) if threads == 1 else (lambda r: r["value"])
        of_copy = value(t) / value(copy) if copy and t["unit"] == "GB/s" and name != "copy" else None
        rows.append({"label": label, "name": name, "tjit": t, "pytorch": p, "passive": pp, "tjit_passive": tp,
                     "sp": speedup(t, p), "sp_passive": speedup(tp, pp), "sp_cpu": cpu_speedup(t, p),
                     "of_copy": of_copy})
    return rows


def markdown(tj, pt, threads_list):
    out = []
    for nt in threads_list:
        rows = model_rows(tj, pt, nt)
        if rows:
            out.append(f"\n#### Models, {nt} thread{'s' if nt > 1 else ''} (median per call)\n")
            out.append("| workload | tjit eager | tjit traced | tjit decomposed | PyTorch | tjit traced, passive "
                       "| PyTorch passive | traced/eager | decomposed/traced | **speed-up traced** | speed-up eager "
                       "| speed-up decomposed | speed-up traced, both passive | faults/call e/t/d/PyTorch "
                       "| arena MiB traced/decomposed |" + (" speed-up traced / eager, thread CPU time |" if nt == 1 else ""))
            out.append("|---" * (16 if nt == 1 else 15) + "|")
            for r in rows:
                e, t, d = r["tjit"]
                out.append(f"| {r['label']} | {fmt(e)} | {fmt(t)} | {fmt(d)} | {fmt(r['pytorch'])} | "
                           f"{fmt(r['traced_passive'])} | {fmt(r['passive'])} | {fx(r['traced_eager'])} | {fx(r['decomp_traced'])} | "
                           f"**{fx(r['sp_traced'])}** | {fx(r['sp_eager'], 1.0)} | {fx(r['sp_decomp'])} | "
                           f"{fx(r['sp_traced_passive'])} | {faults(e)}/{faults(t)}/{faults(d)}/{faults(r['pytorch'])}"
                           f" | {mib(t)}/{mib(d)} |" + (f" {fx(r['sp_traced_cpu'])} / {fx(r['sp_eager_cpu'])} |"
                                                         if nt == 1 else ""))
    for nt in threads_list:
        rows = micro_rows(tj, pt, nt)
        if rows:
            out.append(f"\n#### Micro-benchmarks, {nt} thread{'s' if nt > 1 else ''}\n")
            out.append("| benchmark | tjit | PyTorch | tjit passive | PyTorch passive | speed-up | speed-up, both passive "
                       "| tjit / copy (1 thread: CPU time) | faults/call tjit/PyTorch |"
                       + (" tjit, thread CPU time | speed-up, thread CPU time |" if nt == 1 else ""))
            out.append("|---" * (11 if nt == 1 else 9) + "|")
            for r in rows:
                cpu = cpu_value(r["tjit"])
                cpu_text = "n/a" if cpu is None else f"{cpu:.3g} {r['tjit']['unit']}"
                of_copy = "" if r["of_copy"] is None else f"{100 * r['of_copy']:.0f}%"
                out.append(f"| {r['label']} | {fmt(r['tjit'])} | {fmt(r['pytorch'])} | {fmt(r['tjit_passive'])} | "
                           f"{fmt(r['passive'])} | "
                           f"{fx(r['sp'], 1.0)} | {fx(r['sp_passive'], 1.0)} | "
                           f"{of_copy} | "
                           f"{faults(r['tjit'])}/{faults(r['pytorch'])} |"
                           + (f" {cpu_text} | {fx(r['sp_cpu'])} |" if nt == 1 else ""))
    return "\n".join(out)


def targets(tj, pt, threads_list):
    lines = ["| target | measured | |", "|---|---|---|"]
    for name, what, mode, nt, pmode, want in TARGETS:
        a, b = tj.get(name, what, mode, nt), pt.get(name, what, pmode, nt)
        got, cpu = speedup(a, b), cpu_speedup(a, b)
        verdict = "n/a" if got is None else "met" if got >= want else "**missed**"
        if cpu is not None:
            verdict += f" (thread CPU time: {'met' if cpu >= want else 'missed'})"
        lines.append(f"| {name} {what}, {mode}, {nt} thread: >= {want}x faster than PyTorch | {fx(got)} "
                     f"(thread CPU time {fx(cpu)}) | {verdict} |")
    if 2 in threads_list:
        rows = model_rows(tj, pt, 2)
        worst = [(r["sp_traced"], r["label"]) for r in rows if r["sp_traced"] is not None]
        if worst:
            got, label = min(worst)
            lines.append(f"| 2 threads: traced >= 1.5x faster than PyTorch's default on every model | worst: "
                         f"{label} {fx(got)} | {'met' if got >= 1.5 else '**missed**'} |")
        both = [(r["sp_traced_passive"], r["label"]) for r in rows if r["sp_traced_passive"] is not None]
        if both:
            got, label = min(both)
            lines.append(f"| (for information) 2 threads, tjit and PyTorch both with OMP_WAIT_POLICY=passive | "
                         f"worst: {label} {fx(got)} | {'>= 1.5x' if got >= 1.5 else 'below 1.5x'} |")
    eager = []
    for nt in threads_list:
        for r in model_rows(tj, pt, nt):
            if r["sp_eager"] is not None:
                eager.append((r["sp_eager"], f"{r['label']} ({nt} thr)"))
    if eager:
        got, label = min(eager)
        lines.append(f"| eager at least as fast as PyTorch eager everywhere (models) | worst: {label} {fx(got)} | "
                     f"{'met' if got >= 1.0 else '**missed**'} |")
    return "\n".join(lines)


def micro_targets(tj, threads_list):
    """Issues 2 and 3's micro-benchmark targets, from tjit's figures (wall
    median; with 1 thread also from the thread's CPU time, which time the
    loaded machine took away does not inflate)."""
    lines = ["| target | measured | |", "|---|---|---|"]

    def verdict(ok, ok_cpu):
        text = "n/a" if ok is None else "met" if ok else "**missed**"
        return text + ("" if ok_cpu is None else f" (thread CPU time: {'met' if ok_cpu else 'missed'})")

    def cpu_ratio(slow, fast, nt):
        """slow's thread CPU time over fast's (1 thread only, else None)."""
        return slow["cpu_ms"] / fast["cpu_ms"] if nt == 1 and fast.get("cpu_ms") and slow.get("cpu_ms") else None

    def ratio_row(target, got, ratio, cpu, need, unit):
        """The row of a target `ratio >= need` (and `cpu >= need` for the
        CPU-time ratio when there is one); unit "%" or "x" shows the ratios."""
        show = (lambda v: f"{100 * v:.0f}%") if unit == "%" else (lambda v: f"{v:.2f}x")
        lines.append(f"| {target} | {got}: {show(ratio)}" + (f" (CPU time {show(cpu)})" if cpu else "") + " | "
                     f"{verdict(ratio >= need, None if cpu is None else cpu >= need)} |")

    d = tj.get("dispatch", "dispatch", "eager", 1)
    if d:
        cpu = cpu_value(d)
        lines.append(f"| dispatch, 1 thread: <= 60 ns per tj_add | {d['value']:.1f} ns (CPU time {cpu:.1f} ns) | "
                     f"{verdict(d['value'] <= 60, cpu <= 60)} |")
    m = tj.get("dispatch_mode", "dispatch_mode", "eager", 1)
    if d and m:
        lines.append(f"| (report) overhead of one pushed pass-through mode, 1 thread | "
                     f"{m['value'] - d['value']:+.1f} ns per call | |")
    for nt in threads_list:
        ti = 0 if nt == 1 else 1
        for name, (pt1, pt2) in ISSUE_PYTORCH.items():
            r = tj.get(name, name, "eager", nt)
            if not r or nt > 2:
                continue
            ref = (pt1, pt2)[ti]
            want = min(2 * ref, 0.8 * ISSUE_MEMCPY[ti])
            rule = f"min(2 x {ref}, 0.8 x {ISSUE_MEMCPY[ti]:.0f})"
            if name == "gelu" and nt == 1:
                want, rule = max(want, 10.0), f"{rule}, and >= 10"
            cpu = cpu_value(r) if nt == 1 else None
            got = f"{r['value']:.3g} GB/s" + (f" (CPU time {cpu:.3g})" if cpu else "")
            # the memcpy part of the rule against this run's own copy (1 thread: CPU times)
            copy = tj.get("copy", "copy", "eager", nt)
            same_run = ""
            if copy:
                mine, ref = (cpu, cpu_value(copy)) if nt == 1 and cpu else (r["value"], copy["value"])
                same_run = (f"; {100 * mine / ref:.0f}% of this run's copy ({ref:.3g} GB/s): 80% "
                            f"{'met' if mine >= 0.8 * ref else 'missed'}")
            lines.append(f"| {name}, {nt} thread{'s' if nt > 1 else ''}: >= {want:.3g} GB/s ({rule}) | {got} | "
                         f"{verdict(r['value'] >= want, None if cpu is None else cpu >= want)}{same_run} |")
        mm, blas = tj.get("mm", "mm", "eager", nt), tj.get("mm_cblas", "mm_cblas", "eager", nt)
        if mm and blas:
            ratio_row(f"mm 1024^3, {nt} thread{'s' if nt > 1 else ''}: >= 95% of cblas_sgemm in the same run",
                      f"{mm['value']:.3g} vs {blas['value']:.3g} GFLOP/s", mm["value"] / blas["value"],
                      cpu_ratio(blas, mm, nt), 0.95, "%")
        f, dec = tj.get("sdpa", "sdpa", "eager", nt), tj.get("sdpa_decomp", "sdpa_decomp", "eager", nt)
        if f and dec:
            ratio_row(f"sdpa [1,12,128,64] causal, {nt} thread{'s' if nt > 1 else ''}: fused at least as fast as "
                      "matmul-softmax-matmul", f"{f['median_ms']:.3f} vs {dec['median_ms']:.3f} ms",
                      dec["median_ms"] / f["median_ms"], cpu_ratio(dec, f, nt), 1.0, "x")
    return "\n".join(lines)


# ---------------------------------------------------------------- the chart
def svg_chart(tj, pt, threads_list):
    """Horizontal bars of the speed-ups over PyTorch (log scale), per workload."""
    # (legend, threads, key in model_rows, key in micro_rows, colour)
    series = [("traced, 1 thread", 1, "sp_traced", None, "#1f77b4"),
              ("traced (micro: eager), 1 thread, thread CPU time", 1, "sp_traced_cpu", "sp_cpu", "#17becf"),
              ("traced, 2 threads", 2, "sp_traced", None, "#9ecae1"),
              ("traced, 2 threads, both OMP passive", 2, "sp_traced_passive", None, "#9467bd"),
              ("eager, 1 thread", 1, "sp_eager", "sp", "#d62728"),
              ("eager, 2 threads", 2, "sp_eager", "sp", "#f4a6a6"),
              ("decomposed, 1 thread", 1, "sp_decomp", None, "#2ca02c")]
    series = [x for x in series if x[1] in threads_list]
    target = {(n, w): v for n, w, _, _, _, v in TARGETS}
    rows_by = {nt: ({r["label"]: r for r in model_rows(tj, pt, nt)}, {r["label"]: r for r in micro_rows(tj, pt, nt)})
               for nt in threads_list}
    groups = []  # (label, [(value or None, colour)], target)
    for r in model_rows(tj, pt, threads_list[0]):
        bars = [(rows_by[nt][0].get(r["label"], {}).get(key), colour) for _, nt, key, _, colour in series]
        groups.append((r["label"], bars, target.get((r["name"], r["what"]))))
    for r in micro_rows(tj, pt, threads_list[0]):
        bars = [(rows_by[nt][1].get(r["label"], {}).get(key), colour) for _, nt, _, key, colour in series if key]
        groups.append((r["label"] + (" (fake, decomposed)" if r["name"] == "trace" else ""), bars, None))
    values = [v for _, bars, _ in groups for v, _ in bars if v]
    if not values:
        return None
    lo = 10 ** math.floor(math.log10(min(min(values), 0.5)))
    hi = 10 ** math.ceil(math.log10(max(max(values), 2)))
    left, right, top, bar_h, gap = 190, 40, 90, 11, 10
    width = 900
    plot_w = width - left - right
    height = top + sum(len(b) * bar_h + gap for _, b, _ in groups) + 60

    def x_of(v):
        return left + plot_w * (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
         f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
         f'<rect width="{width}" height="{height}" fill="white"/>',
         f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">'
         'tjit speed-up over PyTorch 1.13 eager (PyTorch time / tjit time; log scale)</text>']
    # legend, on one line under the title
    items = [(label, colour) for label, _, _, _, colour in series]
    lx, ly = 20, 34
    for label, colour in items:
        if lx + 30 + 6.5 * len(label) > width:
            lx, ly = 20, ly + 18
        s.append(f'<rect x="{lx}" y="{ly}" width="12" height="12" fill="{colour}"/>')
        s.append(f'<text x="{lx + 16}" y="{ly + 10}">{escape(label)}</text>')
        lx += 30 + int(6.5 * len(label))
    s.append(f'<line x1="{lx + 6}" y1="{ly - 1}" x2="{lx + 6}" y2="{ly + 13}" stroke="black" stroke-width="2"/>'
             f'<text x="{lx + 12}" y="{ly + 10}">target (traced, 1 thread)</text>')
    # grid
    bottom = height - 45
    decade = lo
    while decade <= hi * 1.001:
        for k in (1, 2, 5):
            v = decade * k
            if v > hi * 1.001:
                break
            x = x_of(v)
            strong = v == 1
            s.append(f'<line x1="{x:.1f}" y1="{top - 8}" x2="{x:.1f}" y2="{bottom}" '
                     f'stroke="{"black" if strong else "#ddd"}" stroke-width="{1.5 if strong else 1}"/>')
            s.append(f'<text x="{x:.1f}" y="{bottom + 15}" text-anchor="middle">{v:g}x</text>')
        decade *= 10
    s.append(f'<text x="{left + plot_w / 2}" y="{bottom + 32}" text-anchor="middle">'
             'above 1x: tjit faster; below: PyTorch faster</text>')
    y = top
    for label, bars, tgt in groups:
        gh = len(bars) * bar_h
        s.append(f'<text x="{left - 8}" y="{y + gh / 2 + 4}" text-anchor="end">{escape(label)}</text>')
        for i, (v, colour) in enumerate(bars):
            if not v:
                continue
            x0, x1 = x_of(1), x_of(v)
            s.append(f'<rect x="{min(x0, x1):.1f}" y="{y + i * bar_h}" width="{abs(x1 - x0):.1f}" height="{bar_h - 1}"'
                     f' fill="{colour}"><title>{escape(label)}: {v:.2f}x</title></rect>')
            s.append(f'<text x="{max(x0, x1) + 3:.1f}" y="{y + i * bar_h + bar_h - 2}" font-size="9">{v:.2f}x</text>')
        if tgt:
            xt = x_of(tgt)
            s.append(f'<line x1="{xt:.1f}" y1="{y - 2}" x2="{xt:.1f}" y2="{y + bar_h + 1}" stroke="black" '
                     f'stroke-width="2"/>')
        y += gh + gap
    s.append("</svg>")
    return "\n".join(s) + "\n"


def section(tj, pt, meta, threads_list, commands, note):
    tmeta, pmeta = meta["tjit"], meta["pytorch"]
    loads = [m["loadavg"][0] for m in tmeta + pmeta if m.get("loadavg")]
    dates = sorted(m["date"] for m in tmeta + pmeta if m.get("date"))
    core = sorted({m.get("openblas_core", "?") for m in tmeta})
    procs = [p for m in pmeta for p in m.get("processes", [])]
    torch_version = procs[0]["torch"] if procs else "n/a"
    lines = [BEGIN, "## tjit bench vs PyTorch (`tjit bench`, `bench/torch_ref.py`, `bench/merge.py`)", ""]
    lines.append("### Commands\n\n```")
    lines += commands or ["bench/compare.sh"]
    lines.append("```\n")
    lines.append(f"- Date: {dates[0]} to {dates[-1]}" if dates else "- Date: n/a")
    lines.append(f"- Load average (1 min) when each part started: {min(loads):.2f} to {max(loads):.2f} "
                 f"on {tmeta[0].get('cpus', '?') if tmeta else '?'} CPUs" if loads else "- Load average: n/a")
    lines.append(f"- OpenBLAS core (openblas_get_corename): {', '.join(core)}; OPENBLAS_CORETYPE=Haswell in the "
                 "environment")
    lines.append(f"- Threads: {', '.join(map(str, threads_list))}. tjit: `tj_set_num_threads` (its OpenMP kernels "
                 "and OpenBLAS). PyTorch " + torch_version + ": a fresh process per thread count and policy with "
                 "OMP_NUM_THREADS = OPENBLAS_NUM_THREADS = MKL_NUM_THREADS = N set before `import torch`, and "
                 "`torch.set_num_threads(N)`; \"PyTorch\" = its defaults (OMP_WAIT_POLICY unset), \"PyTorch "
                 "passive\" = OMP_WAIT_POLICY=passive; a 16 MiB tensor allocated and freed before timing.")
    lines.append("- Every figure: median of at least 20 timed calls after 3 warm-up calls (cheap workloads: "
                 "more calls, about 0.25 s in all, at most 400); tjit's three modes interleaved call by call. "
                 "Training steps start each timed call from the parameters and optimiser state after 3 steps "
                 "from seed 0 (copied back, untimed). Forward passes without gradient recording.")
    lines.append("- Checked before timing: tjit's traced and decomposed modes against its eager mode (forward "
                 "output; one step's loss and updated parameters), and PyTorch against tjit (same seed-0 weights "
                 "through a safetensors file, same batch: forward output, one step's loss and updated "
                 "parameters, float32 tolerance).")
    checks = sorted({f"{c} [{p['threads']} thread{'s' if p['threads'] > 1 else ''}]" for p in procs
                     if p.get("policy") == "default" for c in p.get("checks", [])})
    if checks:
        lines.append("\n<details><summary>PyTorch/tjit checks (every PyTorch process checks the models it times;"
                     " \"worst\" is the largest error as a fraction of the tolerance)</summary>\n")
        lines += [f"- {c}" for c in checks]
        lines.append("\n</details>")
    if note:
        lines += ["", note]
    lines.append("\n### Figures")
    lines.append("\nSpeed-up = PyTorch median time / tjit median time (GB/s, GFLOP/s: tjit / PyTorch); above 1x tjit "
                 "is faster. With 1 thread the tables also give the speed-up from the median of the calling thread's "
                 "CPU time per call (CLOCK_THREAD_CPUTIME_ID, time.thread_time: all the work with 1 thread, without "
                 "the time the loaded machine took the CPU away). traced/eager and decomposed/traced are time ratios (below 1x: the first is faster). "
                 "Bold speed-ups below 1x: eager slower than PyTorch.")
    lines.append(markdown(tj, pt, threads_list))
    lines.append("\n### Targets (issue 8, speed)\n")
    lines.append(targets(tj, pt, threads_list))
    lines.append("\n### Targets (issues 2 and 3, micro-benchmarks)\n")
    lines.append(micro_targets(tj, threads_list))
    lines.append("\nChart: [results.svg](results.svg).")
    lines.append(END)
    return "\n".join(lines) + "\n"


def write_section(path, text):
    try:
        with open(path) as f:
            old = f.read()
    except FileNotFoundError:
        old = "# Benchmark results\n"
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        new = head + text.rstrip("\n") + rest.split(END, 1)[1]
    else:
        new = old.rstrip("\n") + "\n\n" + text
    with open(path, "w") as f:
        f.write(new)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--results", help="Markdown file whose merge.py section is replaced (e.g. bench/RESULTS.md)")
    ap.add_argument("--svg", help="write the bar chart here (e.g. bench/results.svg)")
    ap.add_argument("--command", action="append", default=[], help="a command line to list in the section")
    ap.add_argument("--note", default="", help="a paragraph to add to the section")
    args = ap.parse_args()
    tjit, torch, meta = load(args.files)
    tj, pt = Index(tjit), Index(torch)
    threads_list = sorted({r["threads"] for r in tjit})
    if not threads_list:
        sys.exit("merge.py: no tjit results")
    if not torch:
        print("merge.py: no PyTorch results (torch missing?): tjit figures only", file=sys.stderr)
    print(markdown(tj, pt, threads_list))
    print()
    print(targets(tj, pt, threads_list))
    print()
    print(micro_targets(tj, threads_list))
    if args.results:
        write_section(args.results, section(tj, pt, meta, threads_list, args.command, args.note))
        print(f"\nwrote the section to {args.results}")
    if args.svg:
        chart = svg_chart(tj, pt, threads_list)
        if chart:
            with open(args.svg, "w") as f:
                f.write(chart)
            print(f"wrote {args.svg}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
