"""Feeds jaxpmac streams to dieharder and writes a report (issue 7's quality battery).

Usage:
    python -m benchmarks.quality                 # a quick subset of dieharder tests per source
    python -m benchmarks.quality --all           # dieharder -a per source (hours on a CPU)
    python -m benchmarks.quality --tests 0 2 15  # chosen dieharder test numbers

Needs the ``dieharder`` program (Debian/Ubuntu: ``apt-get install dieharder``; the command tries
that itself when it is missing and it runs as root). Raw uint32 words go to ``dieharder -g 200``
(stdin_input_raw). The report lands in ``benchmarks/results/quality/``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import pathlib
import re
import shutil
import subprocess
import sys
import threading

import jax
import jax.numpy as jnp
import numpy as np

import jaxpmac as jp

# Quick subset: birthdays, OPERM5, 32x32 rank, bitstream, count-the-1s (byte), runs,
# STS monobit/runs/serial, RGB bit distribution and minimum distance.
QUICK_TESTS = (0, 1, 2, 4, 8, 15, 100, 101, 102, 200, 203)
CHUNK_WORDS = 1 << 20
INTERLEAVED = 64


def _at(draw, offset: int) -> np.ndarray:
    """``draw`` at a stream offset that may pass 2**32: a traced offset that large needs a
    uint64 scalar, so these draws run with x64 on (same bits: SPEC section 1)."""
    with jax.enable_x64(True):
        return np.asarray(draw(np.uint64(offset)))


def _interleave(states_bits) -> np.ndarray:
    return np.asarray(states_bits).T.reshape(-1)


def _chunks_of_interleaved(make_state, n_streams: int):
    """Streams ``make_state(0..n_streams-1)`` interleaved word by word, chunk after chunk."""
    words_each = CHUNK_WORDS // n_streams
    draw = jax.jit(lambda offset: jax.vmap(
        lambda i: jp.bits(make_state(i), (words_each,), offset=offset))(jnp.arange(n_streams)))
    offset = 0
    while True:
        yield _interleave(_at(draw, offset))
        offset += words_each


def _long_stream():
    state = jp.key(20261122).split_static("dieharder")
    draw = jax.jit(lambda offset: jp.bits(state, (CHUNK_WORDS,), offset=offset))
    offset = 0
    while True:
        yield _at(draw, offset)
        offset += CHUNK_WORDS


# Low-entropy uids, all distinct: 0, 1, ..., 31, then the powers of two 2**5 .. 2**31.
LOW_ENTROPY_UIDS = np.array(list(range(32)) + [1 << k for k in range(5 + 1, 32)], np.uint32)


def _low_entropy_uid(i):
    return jnp.asarray(LOW_ENTROPY_UIDS)[i]


SOURCES = {
    "long-stream": _long_stream,
    "adjacent-uids": lambda: _chunks_of_interleaved(lambda i: jp.key(1).split(i), INTERLEAVED),
    "adjacent-nonces": lambda: _chunks_of_interleaved(lambda i: jp.key(i), INTERLEAVED),
    "low-entropy-uids-depth1": lambda: _chunks_of_interleaved(
        lambda i: jp.key(0).split(_low_entropy_uid(i)), LOW_ENTROPY_UIDS.size),
    "low-entropy-uids-depth5": lambda: _chunks_of_interleaved(
        lambda i: jp.key(0).split(0, 0, 0, 0, _low_entropy_uid(i)), LOW_ENTROPY_UIDS.size),
    "low-entropy-uids-depth8": lambda: _chunks_of_interleaved(
        lambda i: jp.key(0).split(0, 0, 0, 0, 0, 0, 0, _low_entropy_uid(i)),
        LOW_ENTROPY_UIDS.size),
}
# Adjacent static labels are concrete, so they are interleaved from separately drawn streams.
STATIC_LABELS = 16


def _adjacent_labels():
    draws = [jax.jit(lambda offset, label=label: jp.bits(
        jp.key(2).split_static(label), (CHUNK_WORDS // STATIC_LABELS,), offset=offset))
        for label in range(STATIC_LABELS)]
    offset = 0
    while True:
        yield _interleave([_at(d, offset) for d in draws])
        offset += CHUNK_WORDS // STATIC_LABELS


SOURCES["adjacent-static-labels"] = _adjacent_labels

RESULT_LINE = re.compile(
    r"^\s*(\S+)\|\s*(\d+)\|\s*(\d+)\|\s*(\d+)\|\s*([0-9.eE+-]+)\|\s*(PASSED|WEAK|FAILED)")


def ensure_dieharder() -> str:
    path = shutil.which("dieharder")
    if path:
        return path
    print("dieharder not found; trying `apt-get install -y dieharder` ...", flush=True)
    subprocess.run(["apt-get", "install", "-y", "-q", "dieharder"], check=False)
    path = shutil.which("dieharder")
    if not path:
        sys.exit("dieharder is needed: install it with `apt-get install dieharder` "
                 "(Debian/Ubuntu) or from https://webhome.phy.duke.edu/~rgb/General/dieharder.php")
    return path


def run_dieharder(dieharder: str, source, test_args: list[str]) -> list[dict]:
    process = subprocess.Popen([dieharder, "-g", "200", *test_args], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines: list[str] = []

    def read_output():
        # Echo as dieharder reports, so a long -a run shows progress and leaves a usable log.
        for raw in process.stdout:
            line = raw.decode(errors="replace")
            lines.append(line)
            if RESULT_LINE.match(line):
                print(f"  {line.rstrip()}", flush=True)

    reader = threading.Thread(target=read_output)
    reader.start()
    try:
        for chunk in source():
            process.stdin.write(chunk.astype("<u4").tobytes())
            if process.poll() is not None:
                break
    except (BrokenPipeError, ValueError):
        pass
    finally:
        try:
            process.stdin.close()
        except BrokenPipeError:
            pass
        process.wait()
        reader.join()
    results = []
    for line in lines:
        match = RESULT_LINE.match(line)
        if match:
            name, ntup, tsamples, psamples, pvalue, verdict = match.groups()
            results.append(dict(test=name, ntup=int(ntup), pvalue=float(pvalue),
                                assessment=verdict))
    return results


def write_report(all_results: dict, out_dir: pathlib.Path, args) -> pathlib.Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "dieharder.json").write_text(json.dumps(all_results, indent=1))
    lines = [f"# dieharder on jaxpmac streams ({datetime.date.today()}, "
             f"{'dieharder -a' if args.all else 'tests ' + ' '.join(map(str, args.tests))})", "",
             "| source | test | ntup | p-value | assessment |", "|---|---|---|---|---|"]
    totals = {}
    for source, results in all_results.items():
        for r in results:
            lines.append(f"| {source} | {r['test']} | {r['ntup']} | {r['pvalue']:.6f} | "
                         f"{r['assessment']} |")
            totals.setdefault(source, {"PASSED": 0, "WEAK": 0, "FAILED": 0})[r["assessment"]] += 1
    lines += ["", "| source | passed | weak | failed |", "|---|---|---|---|"]
    for source, t in totals.items():
        lines.append(f"| {source} | {t['PASSED']} | {t['WEAK']} | {t['FAILED']} |")
    path = out_dir / "dieharder.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="run dieharder -a per source")
    parser.add_argument("--tests", type=int, nargs="+", default=list(QUICK_TESTS))
    parser.add_argument("--sources", nargs="+", default=list(SOURCES), choices=list(SOURCES))
    parser.add_argument("--out", type=pathlib.Path,
                        default=pathlib.Path("benchmarks/results/quality"))
    args = parser.parse_args(argv)
    dieharder = ensure_dieharder()
    all_results = {}
    for source in args.sources:
        all_results[source] = []
        test_sets = [["-a"]] if args.all else [["-d", str(t)] for t in args.tests]
        for test_args in test_sets:
            results = run_dieharder(dieharder, SOURCES[source], test_args)
            for r in results:
                print(f"{source:26s} {r['test']:24s} ntup={r['ntup']:<3d} p={r['pvalue']:.6f} "
                      f"{r['assessment']}", flush=True)
            all_results[source].extend(results)
    path = write_report(all_results, args.out, args)
    print(f"report: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
