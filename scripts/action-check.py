#!/usr/bin/env python3
"""make action-check: runs the shell steps of action.yml here, as a runner would: each
`run` with its `env` (inputs substituted), GITHUB_ACTION_PATH at this checkout, and
GITHUB_PATH, GITHUB_OUTPUT and RUNNER_TEMP in a temporary folder. Three uses: `serve`
(then a WebSocket login at the output url), `test` with the reference model, and `test`
against the Python SDK's driver; the reports and outputs are checked. The upload step
(actions/upload-artifact) is not run here.

    scripts/action-check.py dist/mockchat-VERSION-linux-x86_64.tar.gz"""

import os
import re
import signal
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def run_action(tarball: str, inputs: dict, temp: str) -> dict:
    """Runs every step whose `if` holds; returns the outputs the steps wrote."""
    action = yaml.safe_load(open(os.path.join(ROOT, "action.yml")))
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    values.update(tarball=tarball, **inputs)
    github_path, outputs = os.path.join(temp, "path"), {}
    open(github_path, "w").close()
    for step in action["runs"]["steps"]:
        condition = step.get("if", "")
        mode = re.search(r"inputs\.mode == '(\w+)'", condition)
        if mode and values["mode"] != mode.group(1):
            continue
        if "run" not in step:
            print(f"action-check: not run here: {step['name']} ({step['uses']})")
            continue
        output_file = os.path.join(temp, f"output-{step.get('id', 'install')}")
        env = dict(os.environ, GITHUB_ACTION_PATH=ROOT, GITHUB_PATH=github_path, GITHUB_OUTPUT=output_file,
                   RUNNER_TEMP=temp)
        env["PATH"] = ":".join(open(github_path).read().split() + [env["PATH"]])
        for name, value in (step.get("env") or {}).items():
            env[name] = re.sub(r"\$\{\{ inputs\.([\w-]+) \}\}", lambda m: values[m.group(1)], str(value))
        done = subprocess.run(["bash", "-c", step["run"]], env=env, cwd=temp)
        if done.returncode != 0:
            sys.exit(f"action-check: step '{step['name']}' failed with status {done.returncode}")
        if os.path.exists(output_file):
            for line in open(output_file).read().splitlines():
                key, _, value = line.partition("=")
                outputs[key] = value
    return outputs


def main() -> None:
    tarball = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as temp:
        served = run_action(tarball, {"mode": "serve", "port": "18917"}, temp)
        try:
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "ws-login-check.py"), served["url"]], check=True)
            assert served["control-url"] == "http://127.0.0.1:18917/control", served
        finally:
            os.kill(int(served["pid"]), signal.SIGTERM)
        print("action-check: ok: serve in the background, a login at its url")
    for sdk, label in (("", "the reference model"),
                       (f"python3 {ROOT}/Drivers/python/driver/mockchat_driver.py", "the Python SDK's driver")):
        with tempfile.TemporaryDirectory() as temp:
            tested = run_action(tarball, {"mode": "test", "sdk": sdk, "args": "--filter presence/*"}, temp)
            reports = os.path.join(temp, "mockchat-reports")
            for name in ("junit.xml", "report.json", "report.html"):
                assert os.path.getsize(os.path.join(reports, name)) > 0, name
            assert re.fullmatch(r"scenarios: \d+ passed, 0 failed, 0 skipped", tested["summary"]), tested
            print(f"action-check: ok: test against {label}: {tested['summary']}; reports written")


if __name__ == "__main__":
    main()
