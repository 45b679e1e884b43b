"""Push and pull time of one image with gzip and with zstd layers (issue #44 item 4), to and from the local registry.

The same image is pushed with each compression to repositories of the bench's own on localhost:5000
(`envgen-bench-pull-<pid>-<run>/<compression>`, a fresh one each time, so that every blob is uploaded): BuildKit
exports it (`FROM IMAGE`, nothing built) with `compression=gzip|zstd,force-compression=true` and pushes it. The first
round (`export`) compresses the layers (BuildKit keeps them, as a build exporting zstd would); the timed rounds
(`push`) upload them, as `envgen push` uploads an image's stored layers. Each push is pulled by containerd's own
client (`ctr images pull`: fetch, decompress, unpack every layer) into a containerd namespace of its own, empty, so
that nothing the engine holds is reused; the namespace and the registry tags are removed after. Runs alternate
gzip/zstd (median of --runs). Prints the layers' compressed sizes (the registry's manifests) and the ratios.

With ``--profile NAME`` the bench takes envgen's own path instead: `envgen build NAME --compression gzip|zstd` (the
sealed, validated images `build --push` publishes) and, in the timed rounds, `docker push` of each as the engine
stores it (what `envgen push` does); the export round is then the build with that compression (cached steps: mostly
the compression and the seal). The media types of every pushed layer are printed: a zstd run with a gzip layer fails.

Needs Docker >= 26 with the containerd image store (zstd layers: Docker 20.10 can neither export nor pull them) and
root for containerd's socket:

    eval "$(sudo scripts/engine-current start)"
    python bench/bench_pull.py --image IMAGE [--runs 3] [--registry localhost:5000]
    python bench/bench_pull.py --profile NAME [--runs 3]     # envgen build --compression, then docker push
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
ZSTD = "application/vnd.oci.image.layer.v1.tar+zstd"
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
    """(the index's digest, the amd64 manifest's layer sizes in bytes, their media types: one, or each once)."""
    headers, body = registry("GET", f"http://{host}/v2/{repo}/manifests/{tag}", f"{OCI_INDEX}, {OCI_MANIFEST}")
    document = json.loads(body)
    digest = headers.get("Docker-Content-Digest", "")
    if document.get("mediaType") == OCI_INDEX:
        image = next(m for m in document["manifests"] if m.get("platform", {}).get("architecture") == "amd64")
        _, body = registry("GET", f"http://{host}/v2/{repo}/manifests/{image['digest']}", OCI_MANIFEST)
        document = json.loads(body)
    layers = document["layers"]
    return digest, [layer["size"] for layer in layers], ", ".join(dict.fromkeys(layer["mediaType"] for layer in layers))


def push(docker: str, image: str, ref: str, compression: str) -> float:
    """Seconds to export ``image`` with ``compression`` and push it as ``ref``."""
    with tempfile.TemporaryDirectory(prefix="envgen-bench-pull-") as tmp:
        Path(tmp, "Dockerfile").write_text(f"FROM {image}\n", encoding="utf-8")
        output = (f"type=image,name={ref},push=true,compression={compression},force-compression=true,"
                  "oci-mediatypes=true")
        return timed([docker, "buildx", "build", "--provenance=false", "--output", output, tmp])


def envgen_build(docker: str, profile: str, compression: str, keep: str) -> float:
    """Seconds of `envgen build PROFILE --compression COMPRESSION` (this checkout's); the sealed image it tagged
    is tagged ``keep`` too (the next build moves envgen's tags)."""
    envgen = [sys.executable, "-m", "envgen", "build", profile, "--compression", compression]
    start = time.monotonic()
    result = subprocess.run(envgen, capture_output=True, text=True, check=False, cwd=Path(__file__).parents[1])
    seconds = time.monotonic() - start
    heads = [line.split() for line in result.stdout.splitlines()]  # "built TAG (...", "TAG is up to date (..."
    tag = next((h[1] if h[0] == "built" else h[0] for h in heads if h[:1] == ["built"] or h[1:4] == ["is", "up", "to"]),
               "")
    if result.returncode != 0 or not tag:
        sys.exit(f"bench_pull: `{' '.join(envgen[2:])}` failed: {(result.stderr or result.stdout).strip()[-600:]}")
    run([docker, "tag", tag, keep])
    return seconds


def docker_push(docker: str, ctr: str, image: str, ref: str) -> float:
    """Seconds for the engine to push ``image`` (its stored layers, as `envgen push` does) as ``ref``, every blob
    uploaded: the engine's hints of where each blob already is are dropped first (``forget_sources``)."""
    forget_sources(ctr, image)
    run([docker, "tag", image, ref])
    return timed([docker, "push", ref])


def forget_sources(ctr: str, image: str) -> None:
    """Drop the ``containerd.io/distribution.source.*`` labels of ``image``'s blobs in the engine's containerd
    (namespace moby): with them its pusher mounts a blob from a repository that has it (no upload, ~0.1 s)."""
    base = [ctr, "--address", CONTAINERD, "--namespace", "moby"]
    name = image if "/" in image.split(":")[0] else f"library/{image}"
    listed = subprocess.run([*base, "images", "ls", f"name==docker.io/{name}"], capture_output=True, text=True,
                            check=False).stdout.splitlines()[1:]
    rows = subprocess.run([*base, "content", "ls"], capture_output=True, text=True, check=False).stdout.splitlines()
    labelled = {row.split()[0]: row.split()[-1] for row in rows if "containerd.io/distribution.source." in row}
    pending = [listed[0].split()[2]] if listed else []
    while pending:
        digest = pending.pop()
        body = subprocess.run([*base, "content", "get", digest], capture_output=True, check=False).stdout
        document = json.loads(body) if body.startswith(b"{") else {}
        pending += [m["digest"] for m in document.get("manifests", [])]
        pending += [layer["digest"] for layer in document.get("layers", [])]
        labels = [label.split("=", 1)[0] for label in labelled.get(digest, "").split(",")
                  if label.startswith("containerd.io/distribution.source.")]
        if labels:
            run([*base, "content", "label", digest, *[f"{label}=" for label in labels]])


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
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--image", help="the image to push and pull (on the current engine), exported by BuildKit")
    what.add_argument("--profile", help="an envgen profile: built with each compression, pushed by the engine")
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
    keep = {c: f"{prefix}/built:{c}" for c in COMPRESSIONS}  # --profile: each build's sealed image
    try:
        times, sizes = rounds(args, prefix, keep)
    finally:
        for ref in keep.values():
            subprocess.run([args.docker, "image", "rm", ref], capture_output=True, check=False)
    print(f"(repositories {args.registry}/{prefix}-*: tags removed; their blobs wait for the registry's own garbage "
          "collection)")
    report(args.profile or args.image, version, args.runs, times, sizes, bool(args.profile))
    if args.profile and sizes["zstd"][1] != ZSTD:
        sys.exit(f"bench_pull: envgen build --compression zstd pushed layers of {sizes['zstd'][1]}, not only zstd")
    return 0


def rounds(args: argparse.Namespace, prefix: str,
           keep: dict[str, str]) -> tuple[dict[str, dict[str, list[float]]], dict[str, tuple[list[int], str]]]:
    """The export round (-1) and the timed ones, alternating gzip/zstd; (times, the pushed layers' sizes and
    media types)."""
    times: dict[str, dict[str, list[float]]] = {c: {"export": [], "push": [], "pull": []} for c in COMPRESSIONS}
    sizes: dict[str, tuple[list[int], str]] = {}
    for index in range(-1, args.runs):  # run -1: the layers compressed (BuildKit keeps them in its store after)
        for compression in COMPRESSIONS:
            repo = f"{prefix}-{index + 1}/{compression}"  # a fresh repository: the registry holds none of the blobs
            ref = f"{args.registry}/{repo}:bench"
            if args.profile and index < 0:
                times[compression]["export"].append(envgen_build(args.docker, args.profile, compression,
                                                                 keep[compression]))
                continue
            seconds = docker_push(args.docker, args.ctr, keep[compression], ref) if args.profile else \
                push(args.docker, args.image, ref, compression)
            times[compression]["export" if index < 0 else "push"].append(seconds)
            digest, layers, media = layer_sizes(args.registry, repo, "bench")
            sizes[compression] = (layers, media)
            if index >= 0:
                times[compression]["pull"].append(pull(args.ctr, ref, f"{prefix}-{index}-{compression}"))
            subprocess.run([args.docker, "image", "rm", ref], capture_output=True, check=False)
            registry("DELETE", f"http://{args.registry}/v2/{repo}/manifests/{digest}")
    return times, sizes


def report(image: str, version: str, runs: int, times: dict[str, dict[str, list[float]]],
           sizes: dict[str, tuple[list[int], str]], envgen: bool = False) -> None:
    export = ("envgen build --compression (the first: the build; then the compression and the seal), pushed by "
              "`docker push`" if envgen else "BuildKit compresses every layer and pushes (first run)")
    print(f"{image} on Docker {version}, median of {runs} runs. export: {export}; push: the compressed layers "
          "uploaded to an empty repository; pull: containerd fetches, decompresses and unpacks into an empty "
          "namespace")
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
