"""Real Helm v4.2.3 (helm-python-sdk) as a client of the API server under
test; the sandbox's tests and the release tests of the product crate share it.

usage: helm_client.py KUBECONFIG NAMESPACE ACTION [ARGS...]
  install RELEASE CHART VALUES_JSON
  upgrade RELEASE CHART VALUES_JSON | upgrade-force RELEASE CHART VALUES_JSON
  rollback RELEASE REVISION | rollback-force RELEASE REVISION
  uninstall RELEASE | list | list-all | history RELEASE | values RELEASE | get RELEASE
The -force actions pass --force-conflicts, as for a release another field
manager applied. Prints the result as JSON on stdout.
"""
import json
import sys

import helm_python
from helm_python import _native


def main():
    kubeconfig, namespace, action, *args = sys.argv[1:]
    cfg = helm_python.Config(kubeconfig_path=kubeconfig, namespace=namespace)
    if action == "install":
        release, chart, values = args
        out = cfg.install(chart, release, json.loads(values), namespace=namespace,
                          create_namespace=True, wait="watcher", timeout=120)
    elif action == "upgrade":
        release, chart, values = args
        out = cfg.upgrade(chart, release, json.loads(values), namespace=namespace,
                          wait="watcher", timeout=120)
    elif action == "upgrade-force":
        # helm-python-sdk 0.2.2 does not expose force_conflicts on upgrade;
        # its native library takes it in the options document.
        release, chart, values = args
        handle, ref = cfg._chart_args(chart)
        opts = {"namespace": namespace, "force_conflicts": True, "wait": "watcher", "timeout_seconds": 120}
        out = json.loads(_native.call_string("helm_upgrade", cfg._raw(), cfg._context_arg(None), handle, ref,
                                             release, values, json.dumps(opts)))
    elif action == "rollback":
        release, revision = args
        cfg.rollback(release, version=int(revision), wait="watcher", timeout=120)
        out = cfg.status(release)
    elif action == "rollback-force":
        release, revision = args
        opts = {"version": int(revision), "force_conflicts": True, "wait": "watcher", "timeout_seconds": 120}
        _native.call_string("helm_rollback", cfg._raw(), release, json.dumps(opts))
        out = cfg.status(release)
    elif action == "uninstall":
        (release,) = args
        out = cfg.uninstall(release, wait="watcher", timeout=120)
    elif action == "list":
        out = cfg.list(all_states=True)
    elif action == "list-all":
        out = cfg.list(all_states=True, all_namespaces=True)
    elif action == "history":
        (release,) = args
        out = cfg.history(release)
    elif action == "values":
        (release,) = args
        out = cfg.get_values(release)
    elif action == "get":
        (release,) = args
        out = cfg.get_all(release)
    else:
        raise SystemExit(f"unknown action {action}")
    json.dump(out, sys.stdout, default=str)


if __name__ == "__main__":
    main()
