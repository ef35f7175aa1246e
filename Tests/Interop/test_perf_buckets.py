"""scripts/perf-buckets: samples of `perf script -F comm,tid,ip,sym` sorted into the parts of a request, by the first
bucket any frame of the stack matches, with the innermost frame splitting the rest."""

import pathlib
import subprocess

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "perf-buckets"


def sample(*frames):
    return "NIO-SGLTN-0-#1 100 \n" + "\n".join(f"\t{0x1000 + i:x} {frame}" for i, frame in enumerate(frames))


def test_each_sample_goes_to_the_first_bucket_its_stack_matches():
    samples = [
        # A checkpoint's pwrite is the checkpoint's, not a socket write or a statement's.
        sample("__libc_pwrite", "sqlite3WalCheckpoint", "sqlite_nio_sqlite3_step", "$s10SesameCore12SQLiteHandleC3run"),
        sample("futex_wait", "pthread_mutex_lock", "$s10SesameCore12SQLiteHandleC3run"),
        sample("__ecp_nistz256_mul_montx", "ecp_nistz256_points_mul_public"),
        sample("swift_retain", "$s11Hummingbird6RouterC"),
        sample("$s8NIOPosix19SelectableEventLoopC06runOne"),
    ]
    result = subprocess.run([str(SCRIPT)], input="\n\n".join(samples) + "\n", capture_output=True, text=True,
                            check=True)
    lines = {line.split("%", 1)[1].strip(): float(line.split("%", 1)[0]) for line in result.stdout.splitlines()
             if "%" in line}
    assert lines == {"SQLite WAL checkpoint": 20.0, "SQLite connection lock (futex)": 20.0,
                     "P-256 signature verify": 20.0, "retain/release and allocation": 20.0,
                     "everything else": 20.0}, result.stdout
    assert result.stdout.strip().endswith("5 samples")


def test_no_samples_is_an_error():
    result = subprocess.run([str(SCRIPT)], input="", capture_output=True, text=True)
    assert result.returncode != 0 and "no samples" in result.stderr
