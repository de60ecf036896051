"""Run an installed library's own test suite (optax, chex) with real JAX or with pyjax aliased
as `jax`, and print the pass/fail/skip/error counts.

The library's `*_test.py` files are copied out of its installed package into a scratch
directory (keeping their relative paths), so the tests import the installed library while
pytest collects only the copies. With `--mode pyjax` a conftest installs
`pyjax.alias_as_jax()` before any test module imports `jax`.

Example (the venv must have the library, pytest, pytest-timeout and the suite's test-only
dependencies, e.g. scikit-learn, cloudpickle, dm-tree):

    python tools/run_library_suites.py --python /work/eco/bin/python --lib optax --mode jax
    python tools/run_library_suites.py --python /work/eco/bin/python --lib optax --mode pyjax \
        --jobs 3 --groups
"""
from __future__ import annotations

import argparse
import pathlib
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

_ALIAS_CONFTEST = '"""Installs the pyjax alias before any test module imports jax."""\n' \
                  "import pyjax\n\npyjax.alias_as_jax()\n"


def package_dir(python: str, lib: str) -> pathlib.Path:
    """The installed package directory of `lib` in the venv of `python` (without importing it)."""
    code = ("import importlib.util, sys; s = importlib.util.find_spec(sys.argv[1]); "
            "print(list(s.submodule_search_locations)[0])")
    out = subprocess.run([python, "-c", code, lib], check=True, capture_output=True, text=True)
    return pathlib.Path(out.stdout.strip())


def copy_tests(pkg: pathlib.Path, scratch: pathlib.Path) -> list[pathlib.Path]:
    """Copy every `*_test.py` under `pkg` to `scratch/<pkg name>_tests/<same relative path>`
    (a name other than the package's, so the copies' module names do not shadow it)."""
    dest_root = scratch / f"{pkg.name}_tests"
    if dest_root.exists():
        shutil.rmtree(dest_root)
    copied = []
    for src in sorted(pkg.rglob("*_test.py")):
        dest = dest_root / src.relative_to(pkg)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)
        copied.append(dest)
    return copied


def _cases(reports: list[pathlib.Path]) -> list[ET.Element]:
    return [case for r in reports for case in ET.parse(r).getroot().iter("testcase")]


def summary_counts(logs: list[pathlib.Path]) -> dict[str, int]:
    """passed/failed/skipped/errors summed over the closing lines pytest wrote to `logs`
    (pytest's own counts: a parameterized case that runs subtests counts once)."""
    counts = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0}
    for log in logs:
        lines = [ln for ln in log.read_text().splitlines() if re.search(r"\d+ (passed|failed)", ln)]
        for n, word in re.findall(r"(\d+) (passed|failed|skipped|errors?)\b", lines[-1] if lines else ""):
            counts["errors" if word.startswith("error") else word] += int(n)
    return counts


def failure_groups(reports: list[pathlib.Path]) -> list[tuple[str, list[str]]]:
    """Failing/erroring tests grouped by their error message's first line, largest first."""
    groups: dict[str, list[str]] = {}
    for case in _cases(reports):
        for child in case:
            if child.tag in ("error", "failure"):
                msg = (child.get("message") or "").strip().splitlines()
                key = re.sub(r"0x[0-9a-f]+|\d+", "N", msg[0] if msg else "")[:160]
                groups.setdefault(key, []).append(f"{case.get('classname')}::{case.get('name')}")
                break
    return sorted(groups.items(), key=lambda kv: -len(kv[1]))


def shards(tests: list[pathlib.Path], n: int) -> list[list[pathlib.Path]]:
    """`tests` in at most `n` groups of about equal total file size (largest files first)."""
    groups: list[list[pathlib.Path]] = [[] for _ in range(min(n, len(tests)))]
    sizes = [0] * len(groups)
    for t in sorted(tests, key=lambda t: -t.stat().st_size):
        i = sizes.index(min(sizes))
        groups[i].append(t)
        sizes[i] += t.stat().st_size
    return [g for g in groups if g]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", required=True, help="python of the venv with the library")
    ap.add_argument("--lib", required=True, help="library whose tests to run (optax, chex)")
    ap.add_argument("--mode", choices=["jax", "pyjax"], required=True,
                    help="jax: real JAX; pyjax: pyjax.alias_as_jax() installed first")
    ap.add_argument("--scratch", help="scratch dir (default /tmp/suites_<lib>_<mode>)")
    ap.add_argument("--timeout", type=int, default=300, help="per-test timeout in seconds")
    ap.add_argument("--jobs", type=int, default=1,
                    help="pytest processes run side by side, each on a share of the files")
    ap.add_argument("--groups", action="store_true",
                    help="also print the failures grouped by error message")
    ap.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = ap.parse_args(argv)

    scratch = pathlib.Path(args.scratch or f"/tmp/suites_{args.lib}_{args.mode}")
    scratch.mkdir(parents=True, exist_ok=True)
    tests = copy_tests(package_dir(args.python, args.lib), scratch)
    conftest = scratch / "conftest.py"
    if args.mode == "pyjax":
        conftest.write_text(_ALIAS_CONFTEST)
    elif conftest.exists():
        conftest.unlink()
    (scratch / "pytest.ini").write_text("[pytest]\n")  # stop the rootdir search here
    groups = shards(tests, args.jobs) if args.jobs > 1 else [[scratch / f"{args.lib}_tests"]]
    procs, reports = [], []
    for k, files in enumerate(groups):
        report = scratch / f"report-{k}.xml"
        report.unlink(missing_ok=True)
        cmd = [args.python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "--import-mode=importlib", f"--timeout={args.timeout}", f"--junitxml={report}",
               "-rfE", *args.pytest_args, *map(str, files)]
        print(f"shard {k} (log {scratch}/shard-{k}.log): {' '.join(cmd)}", flush=True)
        procs.append(subprocess.Popen(cmd, cwd=scratch, stdout=open(scratch / f"shard-{k}.log", "w"),
                                      stderr=subprocess.STDOUT))
        reports.append(report)
    rcs = [p.wait() for p in procs]
    logs = [scratch / f"shard-{k}.log" for k in range(len(groups))]
    for log in logs:  # the failures' short summary and closing line of each process
        text = log.read_text()
        print(text[text.find("short test summary info"):] if "short test summary info" in text
              else text.splitlines()[-1] if text.strip() else "")
    missing = [str(r) for r in reports if not r.exists()]
    if missing:
        print(f"no report from {missing} (pytest exits {rcs})")
        return 1
    counts = summary_counts(logs)
    print(f"{args.lib} [{args.mode}], {len(tests)} test files: "
          + ", ".join(f"{v} {k}" for k, v in counts.items()))
    if args.groups:
        for key, ids in failure_groups(reports):
            print(f"{len(ids):5d}  {key}\n       e.g. {ids[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
