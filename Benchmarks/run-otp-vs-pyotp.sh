#!/usr/bin/env bash
# Runs the OneTimeCode benchmarks (ordo-one/benchmark) and the same operations in pyotp (and segno for QR
# encoding, when it can be installed from PyPI) in one run, and prints both figures and their ratio.
# Usage: Benchmarks/run-otp-vs-pyotp.sh   (from anywhere; the first run builds in release mode: several minutes)
#        KEEP=1 keeps the raw percentile files.
set -euo pipefail
cd "$(dirname "$0")"

python3 -c 'import pyotp' 2>/dev/null || python3 -m pip install -q --disable-pip-version-check pyotp
python3 -c 'import segno' 2>/dev/null || python3 -m pip install -q --disable-pip-version-check segno || true

out=$(mktemp -d /tmp/sesame-otp-bench.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$out"' EXIT

echo "== Swift (ordo-one/benchmark, release build)"
swift package --allow-writing-to-package-directory benchmark \
    --target OneTimeCodeBenchmarks --format histogramPercentiles --path "$out" --no-progress >"$out/swift.log" 2>&1 || {
    cat "$out/swift.log"; exit 1; }

echo "== Python: pyotp $(python3 -c 'import importlib.metadata as m; print(m.version("pyotp"))')," \
    "segno $(python3 -c 'import importlib.metadata as m; print(m.version("segno"))' 2>/dev/null || echo 'not installed')"
python3 - "$out" <<'PY'
import base64, csv, os, sys, timeit

import pyotp

out = sys.argv[1]


def swift_median_ns(benchmark):
    """Median wall-clock time of one operation, in ns, from the benchmark's histogram percentile export."""
    name = benchmark.replace(" ", "_")
    path = os.path.join(out, f"Current_run.OneTimeCodeBenchmarks.{name}.wallClock.histogram.percentiles.tsv")
    if not os.path.exists(path):
        raise SystemExit(f"no Swift result for {benchmark!r} in {sorted(os.listdir(out))}")
    with open(path) as f:
        rows = list(csv.reader(f, delimiter="\t"))
    unit = rows[0][1]
    scales = {"(ns)": 1.0, "(μs)": 1e3, "(us)": 1e3, "(ms)": 1e6}
    scale = next((v for k, v in scales.items() if k in unit), None)
    if scale is None:
        raise SystemExit(f"unknown time unit in {path}: {unit}")
    for percentile, value in rows[1:]:
        if float(percentile) == 50.0:
            return float(value) * scale
    raise SystemExit(f"no median in {path}")


def per_op_ns(fn):
    """Median of five timeit runs, each long enough (autorange: at least 0.2 s), per call in ns."""
    timer = timeit.Timer(fn)
    n, _ = timer.autorange()
    runs = sorted(timer.timeit(n) / n for _ in range(5))
    return runs[2] * 1e9


# The same inputs as the Swift benchmarks: RFC 6238's SHA-1 seed, a fixed time, a wrong code outside the window.
secret = base64.b32encode(b"12345678901234567890").decode()
totp = pyotp.TOTP(secret)
now = 1_700_000_000
valid = totp.at(now)
window = {totp.at(now + d * 30) for d in (-1, 0, 1)}
invalid = next(f"{i:06d}" for i in range(1_000_000) if f"{i:06d}" not in window)
uri = (f"otpauth://totp/example.com:alice@example.com?secret={secret}&issuer=example.com"
       "&algorithm=SHA1&digits=6&period=30")

VERIFY_WRONG = "TOTP verify, wrong code (SHA-1, window ±1)"
VERIFY_RIGHT = "TOTP verify, right code (SHA-1, window ±1)"
QR = "QR encode otpauth URI (level M)"
rows = [
    (VERIFY_WRONG, swift_median_ns(VERIFY_WRONG),
     per_op_ns(lambda: totp.verify(invalid, for_time=now, valid_window=1)), "pyotp"),
    (VERIFY_RIGHT, swift_median_ns(VERIFY_RIGHT),
     per_op_ns(lambda: totp.verify(valid, for_time=now, valid_window=1)), "pyotp"),
]
try:
    import segno

    rows.append((QR, swift_median_ns(QR),
                 per_op_ns(lambda: segno.make(uri, error="m", micro=False, mode="byte", boost_error=False)), "segno"))
except ImportError:
    print("segno is not installed: no Python QR figure")
    rows.append((QR, swift_median_ns(QR), None, "-"))
rows.append((QR + " + PNG", swift_median_ns(QR + " + PNG"), None, "-"))

print(f"{'operation':<46}{'Swift':>12}{'Python':>13}{'Python/Swift':>14}")
for name, swift_ns, py_ns, lib in rows:
    py = f"{py_ns / 1000:10.2f} µs" if py_ns else f"{'-':>13}"
    ratio = f"{py_ns / swift_ns:13.1f}x" if py_ns else f"{'-':>14}"
    print(f"{name:<46}{swift_ns / 1000:9.2f} µs{py}{ratio}  ({lib})")
    if name.startswith("TOTP"):
        print(f"{'  throughput, one core':<46}{1e9 / swift_ns:10.0f}/s{1e9 / py_ns:11.0f}/s")
PY
