#!/usr/bin/env python3
"""Regenerate the expected outputs of the template conformance corpus with real Helm.

Usage: python3 templates-compat/regenerate.py [--only AREA]

Reads the case definitions in cases.py, renders each one as a tiny chart with
Helm v4.2.3 (PyPI package helm-python-sdk, `import helm_python`) and writes
expected/<area>.json. Never edit those files by hand: change cases.py and rerun.
"""
import argparse, base64, json, os, shutil, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import helm_python  # noqa: E402
from cases import CASES, STRVALS  # noqa: E402

CHART_YAML = "apiVersion: v2\nname: mychart\nversion: 0.1.0\nappVersion: \"1.0\"\ndescription: conformance case\n"


def render_case(case):
    if case.get("tz") is not None and case.get("tzif") is None and os.environ.get("TC_RENDER_ONE") != "1":
        # Go reads TZ once per process: such a case renders in a process of
        # its own ("machine" cases, tz None, use the process's own zone).
        env = dict(os.environ, TZ=case["tz"], TC_RENDER_ONE="1")
        done = subprocess.run([sys.executable, os.path.abspath(__file__), "--render-one"],
                              input=json.dumps(case), capture_output=True, text=True, env=env, check=True)
        return json.loads(done.stdout)
    d = tempfile.mkdtemp(prefix="tc-")
    if case.get("tzif") is not None and os.environ.get("TC_RENDER_ONE") != "1":
        # A zone file written for the case: TZ names its path ("{tzif}").
        path = os.path.join(d, "zone.tzif")
        with open(path, "wb") as f:
            f.write(base64.b64decode(case["tzif"]))
        try:
            env = dict(os.environ, TZ=case["tz"].replace("{tzif}", path), TC_RENDER_ONE="1")
            done = subprocess.run([sys.executable, os.path.abspath(__file__), "--render-one"],
                                  input=json.dumps(case), capture_output=True, text=True, env=env, check=True)
            return json.loads(done.stdout)
        finally:
            shutil.rmtree(d, ignore_errors=True)
    try:
        os.makedirs(os.path.join(d, "templates"))
        files = dict(case.get("files") or {})
        files.setdefault("Chart.yaml", CHART_YAML)
        files["values.yaml"] = case.get("values", "")
        files["templates/t.yaml"] = case["template"]
        for name, text in files.items():
            p = os.path.join(d, name)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)
        for name, b64 in (case.get("binfiles") or {}).items():
            p = os.path.join(d, name)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(base64.b64decode(b64))
        try:
            chart = helm_python.Chart.load(d)
        except helm_python.HelmError as e:
            return {"load_error": str(e)}
        try:
            out = chart.render(case.get("user"), name="rel", namespace="ns")
        except helm_python.HelmError as e:
            return {"error": str(e)}
        return {"output": out}
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--render-one", action="store_true")
    a = ap.parse_args()
    if a.render_one:
        print(json.dumps(render_case(json.load(sys.stdin))))
        return
    by_area = {}
    for c in CASES:
        by_area.setdefault(c["area"], []).append(c)
    os.makedirs(os.path.join(HERE, "expected"), exist_ok=True)
    total = 0
    for area, cases in sorted(by_area.items()):
        if a.only and area != a.only:
            continue
        seen = set()
        out = []
        for c in cases:
            if c["name"] in seen:
                raise SystemExit(f"duplicate case name {area}/{c['name']}")
            seen.add(c["name"])
            rec = {k: c[k] for k in ("name", "template") }
            for k in ("values", "user", "files", "binfiles"):
                if c.get(k):
                    rec[k] = c[k]
            if c.get("tz") is not None:
                rec["tz"] = c["tz"]
            if c.get("tzif") is not None:
                rec["tzif"] = c["tzif"]
            rec.update(render_case(c))
            out.append(rec)
        with open(os.path.join(HERE, "expected", f"{area}.json"), "w") as f:
            json.dump({"helm": helm_python.helm_sdk_version(), "cases": out}, f, indent=1, ensure_ascii=False)
            f.write("\n")
        total += len(out)
        print(f"{area}: {len(out)}")
    if not a.only or a.only == "strvals":
        fns = {"set": helm_python.parse_set_string, "string": helm_python.parse_set_string_values,
               "json": helm_python.parse_set_json, "literal": helm_python.parse_set_literal}
        out = []
        for mode, expr in STRVALS:
            rec = {"mode": mode, "expression": expr}
            try:
                rec["output"] = json.dumps(fns[mode](expr), sort_keys=True, separators=(",", ":"))
            except helm_python.HelmError as e:
                rec["error"] = str(e)
            out.append(rec)
        with open(os.path.join(HERE, "expected", "strvals.json"), "w") as f:
            json.dump({"helm": helm_python.helm_sdk_version(), "cases": out}, f, indent=1, ensure_ascii=False)
            f.write("\n")
        total += len(out)
        print(f"strvals: {len(out)}")
    print(f"total: {total}")


if __name__ == "__main__":
    main()
