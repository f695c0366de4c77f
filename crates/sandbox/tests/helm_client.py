"""Real Helm v4.2.3 (helm-python-sdk) as a client of the API server under test.

usage: helm_client.py KUBECONFIG NAMESPACE ACTION [ARGS...]
  install RELEASE CHART VALUES_JSON | upgrade RELEASE CHART VALUES_JSON
  rollback RELEASE REVISION | uninstall RELEASE | list | history RELEASE | values RELEASE
Prints the result as JSON on stdout.
"""
import json
import sys

import helm_python


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
    elif action == "rollback":
        release, revision = args
        cfg.rollback(release, version=int(revision), wait="watcher", timeout=120)
        out = cfg.status(release)
    elif action == "uninstall":
        (release,) = args
        out = cfg.uninstall(release, wait="watcher", timeout=120)
    elif action == "list":
        out = cfg.list(all_states=True)
    elif action == "history":
        (release,) = args
        out = cfg.history(release)
    elif action == "values":
        (release,) = args
        out = cfg.get_values(release)
    else:
        raise SystemExit(f"unknown action {action}")
    json.dump(out, sys.stdout, default=str)


if __name__ == "__main__":
    main()
