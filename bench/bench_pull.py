"""Push and pull time of one image with gzip and with zstd layers (issue #44 item 4), to and from the local registry.

The same image is pushed with each compression to repositories of the bench's own on localhost:5000
(`envgen-bench-pull-<pid>-<run>/<compression>`, a fresh one each time, so that every blob is uploaded): BuildKit
exports it (`FROM IMAGE`, nothing built) with `compression=gzip|zstd,force-compression=true` and pushes it. The first
round (`export`) compresses the layers (BuildKit keeps them, as a build exporting zstd would); the timed rounds
(`push`) upload them, as `envgen push` uploads an image's stored layers. Each push is pulled by containerd's own
client (`ctr images pull`: fetch, decompress, unpack every layer) into a containerd namespace of its own, empty, so
that nothing the engine holds is reused; the namespace and the registry tags are removed after. Runs alternate
gzip/zstd (median of --runs). Prints the layers' compressed sizes (the registry's manifests) and the ratios.

Needs Docker >= 26 with the containerd image store (zstd layers: Docker 20.10 can neither export nor pull them) and
root for containerd's socket:

    eval "$(sudo scripts/engine-current start)"
    python bench/bench_pull.py --image IMAGE [--runs 3] [--registry localhost:5000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

COMPRESSIONS = ("gzip", "zstd")
CONTAINERD = "/run/envgen-engine-current/exec/containerd/containerd.sock"  # scripts/engine-current's dockerd
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def run(cmd: list[str]) -> None:
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.exit(f"bench_pull: `{' '.join(cmd)}` failed: {(result.stderr or result.stdout).strip()[-600:]}")


def timed(cmd: list[str]) -> float:
    start = time.monotonic()
    run(cmd)
    return time.monotonic() - start


def registry(method: str, url: str, accept: str = "") -> tuple[dict[str, str], bytes]:
    request = urllib.request.Request(url, method=method, headers={"Accept": accept} if accept else {})
    with _NO_PROXY.open(request, timeout=60) as response:
        return dict(response.headers), response.read()


def layer_sizes(host: str, repo: str, tag: str) -> tuple[str, list[int], str]:
    """(the index's digest, the amd64 manifest's layer sizes in bytes, their media type)."""
    headers, body = registry("GET", f"http://{host}/v2/{repo}/manifests/{tag}", f"{OCI_INDEX}, {OCI_MANIFEST}")
    document = json.loads(body)
    digest = headers.get("Docker-Content-Digest", "")
    if document.get("mediaType") == OCI_INDEX:
        image = next(m for m in document["manifests"] if m.get("platform", {}).get("architecture") == "amd64")
        _, body = registry("GET", f"http://{host}/v2/{repo}/manifests/{image['digest']}", OCI_MANIFEST)
        document = json.loads(body)
    layers = document["layers"]
    return digest, [layer["size"] for layer in layers], layers[0]["mediaType"] if layers else ""


def push(docker: str, image: str, ref: str, compression: str) -> float:
    """Seconds to export ``image`` with ``compression`` and push it as ``ref``."""
    with tempfile.TemporaryDirectory(prefix="envgen-bench-pull-") as tmp:
        Path(tmp, "Dockerfile").write_text(f"FROM {image}\n", encoding="utf-8")
        output = (f"type=image,name={ref},push=true,compression={compression},force-compression=true,"
                  "oci-mediatypes=true")
        return timed([docker, "buildx", "build", "--provenance=false", "--output", output, tmp])


def pull(ctr: str, ref: str, namespace: str) -> float:
    """Seconds for containerd to pull and unpack ``ref`` into an empty namespace (removed after)."""
    base = [ctr, "--address", CONTAINERD, "--namespace", namespace]
    try:
        return timed([*base, "images", "pull", "--plain-http", "--platform", "linux/amd64", ref])
    finally:
        subprocess.run([*base, "images", "rm", "--sync", ref], capture_output=True, check=False)
        subprocess.run([*base, "content", "prune", "references"], capture_output=True, check=False)
        subprocess.run([ctr, "--address", CONTAINERD, "namespaces", "rm", namespace], capture_output=True,
                       check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", required=True, help="the image to push and pull (on the current engine)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--registry", default="localhost:5000")
    parser.add_argument("--docker", default="docker", help="a docker CLI with the buildx plugin (Docker >= 26)")
    parser.add_argument("--ctr", default="ctr", help="containerd's ctr (scripts/engine-current puts it on PATH)")
    args = parser.parse_args()
    version = subprocess.run([args.docker, "version", "--format", "{{.Server.Version}}"], capture_output=True,
                             text=True, check=False).stdout.strip()
    if not version or int(version.split(".")[0]) < 26:
        sys.exit(f"bench_pull: Docker {version or '(no answer)'} at {os.environ.get('DOCKER_HOST', 'the default')}"
                 ": zstd layers need Docker >= 26 with the containerd image store (eval \"$(sudo "
                 "scripts/engine-current start)\")")
    prefix = f"envgen-bench-pull-{os.getpid()}"
    times: dict[str, dict[str, list[float]]] = {c: {"export": [], "push": [], "pull": []} for c in COMPRESSIONS}
    sizes: dict[str, tuple[list[int], str]] = {}
    for index in range(-1, args.runs):  # run -1: BuildKit compresses the layers (kept in its store after)
        for compression in COMPRESSIONS:
            repo = f"{prefix}-{index + 1}/{compression}"  # a fresh repository: the registry holds none of the blobs
            ref = f"{args.registry}/{repo}:bench"
            seconds = push(args.docker, args.image, ref, compression)
            times[compression]["export" if index < 0 else "push"].append(seconds)
            digest, layers, media = layer_sizes(args.registry, repo, "bench")
            sizes[compression] = (layers, media)
            if index >= 0:
                times[compression]["pull"].append(pull(args.ctr, ref, f"{prefix}-{index}-{compression}"))
            subprocess.run([args.docker, "image", "rm", ref], capture_output=True, check=False)
            registry("DELETE", f"http://{args.registry}/v2/{repo}/manifests/{digest}")
    print(f"(repositories {args.registry}/{prefix}-*: tags removed; their blobs wait for the registry's own garbage "
          "collection)")
    report(args.image, version, args.runs, times, sizes)
    return 0


def report(image: str, version: str, runs: int, times: dict[str, dict[str, list[float]]],
           sizes: dict[str, tuple[list[int], str]]) -> None:
    print(f"{image} on Docker {version}, median of {runs} runs. export: BuildKit compresses every layer and pushes "
          "(first run); push: the compressed layers uploaded to an empty repository; pull: containerd fetches, "
          "decompresses and unpacks into an empty namespace")
    median = {c: {k: statistics.median(v) for k, v in times[c].items()} for c in COMPRESSIONS}
    for compression in COMPRESSIONS:
        layers, media = sizes[compression]
        largest = ", ".join(f"{s / 1e6:.1f}" for s in sorted(layers, reverse=True)[:4])
        seconds = {k: ", ".join(f"{t:.1f}" for t in v) for k, v in times[compression].items()}
        print(f"  {compression}: layers {sum(layers) / 1e6:.1f} MB ({media}; largest {largest} MB); "
              f"export {seconds['export']}s; push {median[compression]['push']:.1f}s ({seconds['push']}); "
              f"pull {median[compression]['pull']:.1f}s ({seconds['pull']})")
    gz, zs = median["gzip"], median["zstd"]
    size_ratio = sum(sizes["zstd"][0]) / sum(sizes["gzip"][0])
    print(f"  zstd/gzip: size {size_ratio:.2f}x, push {zs['push'] / gz['push']:.2f}x, "
          f"pull {zs['pull'] / gz['pull']:.2f}x, "
          f"push+pull {(zs['push'] + zs['pull']) / (gz['push'] + gz['pull']):.2f}x")


if __name__ == "__main__":
    raise SystemExit(main())
