#!/usr/bin/env python3
"""Seed an OCI registry with the bundled charts, pushed by real Helm.

The registry stands in for the charts' upstream registries: each chart of
the pins file goes to <registry>/<upstream host>/<upstream path>, so that
`--registry-mirror quay.io=<registry>/quay.io` (one rule per host) finds it.
Helm's manifest carries the tarball's modification time as
org.opencontainers.image.created; the copies pushed get a fixed time, so the
manifest digests are the same on every machine and match the pins.

usage: seed_registry.py REGISTRY [--charts DIR]... [--pins FILE] [--only CHART]... [--extra TARBALL=oci://...]... [--images] [--tls]
"""
import argparse
import gzip
import hashlib
import io
import json
import os
import tarfile
import urllib.request
import shutil
import sys
import tempfile
import tomllib

CREATED = "2026-08-22T00:00:00Z"
CREATED_EPOCH = 1787356800  # CREATED as seconds since 1970


def push_standin_image(registry, tls, name, tag):
    """A minimal image standing in for NAME:TAG (one file naming it), built
    byte for byte the same on every machine, pushed by the registry API."""
    scheme = "https" if tls else "http"
    data = f"stand-in for {name}:{tag}\n".encode()
    tar_bytes = io.BytesIO()
    with tarfile.open(fileobj=tar_bytes, mode="w", format=tarfile.USTAR_FORMAT) as t:
        info = tarfile.TarInfo("IMAGE")
        info.size, info.mtime, info.mode = len(data), 0, 0o644
        t.addfile(info, io.BytesIO(data))
    layer = gzip.compress(tar_bytes.getvalue(), mtime=0)
    diff_id = "sha256:" + hashlib.sha256(tar_bytes.getvalue()).hexdigest()
    config = json.dumps({"architecture": "amd64", "os": "linux",
                         "config": {"Labels": {"org.opencontainers.image.ref.name": f"{name}:{tag}"}},
                         "rootfs": {"type": "layers", "diff_ids": [diff_id]}},
                        sort_keys=True, separators=(",", ":")).encode()
    host, _, repo = name.partition("/")
    base = f"{scheme}://{registry}/v2/{host}/{repo}"

    def blob(content):
        digest = "sha256:" + hashlib.sha256(content).hexdigest()
        start = urllib.request.urlopen(urllib.request.Request(f"{base}/blobs/uploads/", method="POST", data=b""))
        location = start.headers["Location"]
        if location.startswith("/"):
            location = f"{scheme}://{registry}{location}"
        sep = "&" if "?" in location else "?"
        urllib.request.urlopen(urllib.request.Request(f"{location}{sep}digest={digest}", method="PUT", data=content,
                                                      headers={"Content-Type": "application/octet-stream"}))
        return {"digest": digest, "size": len(content)}

    manifest = json.dumps({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", **blob(config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", **blob(layer)}],
    }, separators=(",", ":")).encode()
    urllib.request.urlopen(urllib.request.Request(f"{base}/manifests/{tag}", method="PUT", data=manifest,
                                                  headers={"Content-Type": "application/vnd.oci.image.manifest.v1+json"}))
    return "sha256:" + hashlib.sha256(manifest).hexdigest()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "..", ".."))
    ap = argparse.ArgumentParser()
    ap.add_argument("registry", help="host:port of the registry (plain HTTP)")
    shared = os.path.join(root, "..", "shared", "charts")
    ap.add_argument("--charts", action="append", default=[],
                    help="a directory of tarballs (repeatable; default ../shared/charts and its extra/)")
    ap.add_argument("--pins", default=os.path.join(root, "vendored-charts", "catalog.toml"))
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--images", action="store_true",
                    help="also push a stand-in image for every [[image]] pin, under <registry>/<its name>")
    ap.add_argument("--tls", action="store_true",
                    help="the registry serves HTTPS (its CA given to Helm in SSL_CERT_FILE)")
    ap.add_argument("--extra", action="append", default=[],
                    help="TARBALL=oci://host/path: another chart, pushed under the registry the same way")
    args = ap.parse_args()
    import helm_python

    dirs = args.charts or [shared, os.path.join(shared, "extra")]

    with open(args.pins, "rb") as f:
        pins = tomllib.load(f)
    work = tempfile.mkdtemp(prefix="navique-seed-")
    try:
        pushes = []
        for entry in pins.get("capability", []) + pins.get("workload", []):
            if args.only and entry["chart"] not in args.only:
                continue
            name = f'{entry["chart"]}-{entry["version"]}.tgz'
            found = [os.path.join(d, name) for d in dirs if os.path.exists(os.path.join(d, name))]
            if not found:
                sys.exit(f"{name}: not in {', '.join(dirs)}")
            tarball = found[0]
            pushes.append((tarball, entry["oci"]))
        for extra in args.extra:
            tarball, oci = extra.split("=", 1)
            pushes.append((tarball, oci))
        for tarball, oci in pushes:
            location = oci.removeprefix("oci://")
            parent = location.rsplit("/", 1)[0]
            copy = os.path.join(work, os.path.basename(tarball))
            shutil.copyfile(tarball, copy)
            os.utime(copy, (CREATED_EPOCH, CREATED_EPOCH))
            helm_python.push(copy, f"oci://{args.registry}/{parent}",
                             plain_http=not args.tls)
            print(f"pushed {os.path.basename(tarball)} -> oci://{args.registry}/{location}")
        if args.images:
            for image in pins.get("image", []):
                digest = push_standin_image(args.registry, args.tls, image["name"], image["tag"])
                print(f'pushed stand-in image {image["name"]}:{image["tag"]} {digest}')
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
