"""PyTorch checks of the envgen probe. torch is imported inside the checks; Python 3.7+.

Each check is ``func(ctx) -> (message, figures)`` and raises ``Skip`` or ``Fail`` (probe_common).
"""

import contextlib
import os
import socket
import tempfile
import time
import traceback

from probe_common import (
    PAUSE_S,
    PEAK_ITERS,
    PEAK_WARMUP,
    PEAK_WINDOWS,
    SUSTAIN_BATCHES,
    SUSTAIN_LOAD_S,
    Fail,
    Skip,
    compare_versions,
    cuda_from_variant,
    cudnn_text,
    kernel_support,
    loaded_libraries,
    median,
    plan_speed,
    speed_budget,
    speed_size,
    tflops,
)

FRAMEWORK = "torch"
# Relative Frobenius error allowed against a float64 reference, by the precision of the product.
TOLERANCE = {"fp32": 1e-4, "tf32": 5e-3, "fp16": 5e-3, "bf16": 2e-2}


def _import_torch():
    import torch
    return torch


def _facts(ctx):
    return ctx.frameworks.setdefault(FRAMEWORK, {})


# --- version truth ----------------------------------------------------------------------------------

def check_version(ctx):
    try:
        torch = _import_torch()
    except Exception as exc:  # noqa: BLE001 - an ImportError may name a missing CUDA library
        if ctx.expects_framework("torch"):
            raise Fail("torch %s expected by the profile but cannot be imported: %s"
                       % (ctx.expected("torch"), exc), log=traceback.format_exc()) from exc
        raise Skip("torch is not installed") from exc
    facts = _facts(ctx)
    facts.update({
        "version": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": None,
        "arch_list": [],
    })
    if torch.version.cuda is not None:
        try:
            facts["cudnn"] = cudnn_text(torch.backends.cudnn.version())
        except Exception:  # noqa: BLE001 - cuDNN missing: reported by the conv check
            facts["cudnn"] = None
        try:
            facts["arch_list"] = list(torch.cuda.get_arch_list())
        except Exception:  # noqa: BLE001
            facts["arch_list"] = []
    rows = [("torch", ctx.expected("torch"), torch.__version__, None)]
    for extra in ("torchvision", "torchaudio"):
        try:
            module = __import__(extra)
            facts[extra] = module.__version__
        except Exception as exc:  # noqa: BLE001
            facts[extra] = None
            if ctx.expects_framework(extra):
                raise Fail("%s %s expected by the profile but cannot be imported: %s"
                           % (extra, ctx.expected(extra), exc), facts, log=traceback.format_exc()) from exc
        rows.append((extra, ctx.expected(extra), facts[extra], None))
    cuda_expected, cudnn_expected, cudnn_depth = _expected_cuda(ctx, torch)
    rows.append(("cuda", cuda_expected, torch.version.cuda, 2))
    rows.append(("cudnn", cudnn_expected, facts["cudnn"], cudnn_depth))
    mismatches, figures = compare_versions(rows)
    figures["arch_list"] = facts["arch_list"]
    if mismatches:
        raise Fail("version mismatch: " + "; ".join(mismatches), figures)
    return ("torch %s (CUDA %s, cuDNN %s)" % (torch.__version__, torch.version.cuda, facts["cudnn"]),
            figures)


def _expected_cuda(ctx, torch):
    """(cuda, cudnn, cudnn depth) the profile expects of torch; None where it says nothing."""
    wanted = ctx.expected("torch")
    cuda, specific = ctx.expected_for("cuda", "torch")
    cudnn, cudnn_specific = ctx.expected_for("cudnn", "torch")
    if not specific:
        cuda = cuda_from_variant(wanted) or cuda
        if (wanted and str(wanted).endswith("+cpu")) or ctx.gpu_required() is False:
            cuda = None
    if torch.version.cuda is None and cuda is None:
        cudnn = None
    # a plain profile-wide cuDNN is compared on its major version only: torch wheels bundle their own
    return cuda, cudnn, (2 if cudnn_specific else 1)


# --- devices and kernels ---------------------------------------------------------------------------

def check_devices(ctx):
    torch = _require_torch(ctx)
    reason = ctx.gpu_skip_reason()
    if reason and ctx.mode == "cpu-only":
        raise Skip(reason + ": torch runs on the CPU")
    if torch.version.cuda is None:
        raise Fail("torch is a CPU-only build (torch.version.cuda is None) but the profile expects a GPU")
    if not torch.cuda.is_available():
        try:
            torch.cuda.init()
        except Exception as exc:  # noqa: BLE001 - the real reason CUDA is unusable
            raise Fail("torch.cuda.is_available() is False: %s" % exc, log=traceback.format_exc()) from exc
        raise Fail("torch.cuda.is_available() is False although torch was built with CUDA %s"
                   % torch.version.cuda)
    count = torch.cuda.device_count()
    devices = []
    for index in range(count):
        props = torch.cuda.get_device_properties(index)
        devices.append({
            "index": index,
            "name": props.name,
            "capability": "%d.%d" % (props.major, props.minor),
            "memory_mib": int(props.total_memory // (1024 * 1024)),
            "multiprocessors": props.multi_processor_count,
        })
    figures = {"device_count": count, "devices": devices}
    restricted = os.environ.get("CUDA_VISIBLE_DEVICES") not in (None, "")
    if ctx.gpus and count != len(ctx.gpus) and not restricted:
        raise Fail("torch sees %d GPU(s), the driver %d" % (count, len(ctx.gpus)), figures)
    _facts(ctx)["gpu_ok"] = True
    return "torch sees %d GPU(s): %s" % (count, ", ".join(d["name"] for d in devices)), figures


def check_kernels(ctx):
    torch = _require_torch(ctx)
    _require_gpu(ctx)
    if ctx.arch_override:
        arch_list, source = list(ctx.arch_override), "--arch-list"
    else:
        arch_list, source = list(torch.cuda.get_arch_list()), "torch.cuda.get_arch_list()"
    rows = []
    missing = []
    jit_only = []
    for index in range(torch.cuda.device_count()):
        major, minor = torch.cuda.get_device_capability(index)
        sass, ptx = kernel_support((major, minor), arch_list)
        sm = "sm_%d%d" % (major, minor)
        rows.append({"index": index, "sm": sm, "sass": sass, "ptx": ptx})
        if not sass and not ptx:
            missing.append(sm)
        elif not sass:
            jit_only.append(sm)
    figures = {"arch_list": arch_list, "arch_list_source": source, "devices": rows}
    if missing:
        _facts(ctx)["kernels_ok"] = False
        raise Fail("no kernels for %s in the compiled architectures (%s: %s); no PTX to compile either"
                   % (", ".join(sorted(set(missing))), source, " ".join(arch_list)), figures)
    _facts(ctx)["kernels_ok"] = True
    if jit_only:
        return ("no machine code for %s: the driver JIT-compiles the embedded PTX (slow first start)"
                % ", ".join(sorted(set(jit_only))), figures)
    return "machine code for %s in %s" % (", ".join(sorted(set(r["sm"] for r in rows))), source), figures


def _require_torch(ctx):
    if FRAMEWORK not in ctx.frameworks:
        raise Skip("torch is not available (see torch.version)")
    return _import_torch()


def _require_gpu(ctx):
    reason = ctx.gpu_skip_reason()
    if reason:
        raise Skip(reason)
    if not _facts(ctx).get("gpu_ok"):
        raise Skip("torch cannot use the GPU (see torch.devices)")


def _device(ctx, torch):
    """'cuda:0' when the GPU checks run, 'cpu' in CPU-only mode; Skip when the GPU is unusable."""
    if ctx.mode == "cpu-only":
        return torch.device("cpu")
    _require_gpu(ctx)
    if _facts(ctx).get("kernels_ok") is False:
        raise Skip("no kernels for this GPU (see torch.kernels)")
    return torch.device("cuda:0")


@contextlib.contextmanager
def _fp32_precision(torch, allow_tf32):
    """Matmul and cuDNN precision for fp32 inputs: IEEE fp32 or TF32 (Ampere and later)."""
    if hasattr(torch, "set_float32_matmul_precision"):
        saved = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision("high" if allow_tf32 else "highest")
    else:
        saved = getattr(torch.backends.cuda.matmul, "allow_tf32", None)
        if saved is not None:
            torch.backends.cuda.matmul.allow_tf32 = allow_tf32
    saved_cudnn = getattr(torch.backends.cudnn, "allow_tf32", None)
    if saved_cudnn is not None:
        torch.backends.cudnn.allow_tf32 = allow_tf32
    try:
        yield
    finally:
        if hasattr(torch, "set_float32_matmul_precision"):
            torch.set_float32_matmul_precision(saved)
        elif saved is not None:
            torch.backends.cuda.matmul.allow_tf32 = saved
        if saved_cudnn is not None:
            torch.backends.cudnn.allow_tf32 = saved_cudnn


def _precisions(torch, device):
    """(label, dtype, allow_tf32) the GPU supports; fp32 only on the CPU."""
    if device.type != "cuda":
        return [("fp32", torch.float32, False)]
    major, _minor = torch.cuda.get_device_capability(device)
    rows = [("fp32", torch.float32, False)]
    if major >= 8:
        rows.append(("tf32", torch.float32, True))
    rows.append(("fp16", torch.float16, False))
    bf16 = getattr(torch, "bfloat16", None)
    if bf16 is not None and major >= 8:
        rows.append(("bf16", bf16, False))
    return rows


def _rel_error(torch, value, reference):
    diff = value.detach().double().cpu() - reference.detach().double().cpu()
    return float(torch.norm(diff) / torch.norm(reference.detach().double().cpu()))


# --- placement and correctness -------------------------------------------------------------------

def check_matmul(ctx):
    torch = _require_torch(ctx)
    device = _device(ctx, torch)
    n = min(ctx.matmul_size, 1024)
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=gen)
    b = torch.randn(n, n, generator=gen)
    reference = torch.matmul(a.double(), b.double())
    figures = {"n": n, "device": str(device)}
    bad = []
    for label, dtype, allow_tf32 in _precisions(torch, device):
        with _fp32_precision(torch, allow_tf32):
            c = torch.matmul(a.to(device=device, dtype=dtype), b.to(device=device, dtype=dtype))
            if device.type == "cuda":
                torch.cuda.synchronize()
        if c.device.type != device.type:
            raise Fail("matmul placed on the CPU: result on %s, expected %s" % (c.device, device), figures)
        error = _rel_error(torch, c, reference)
        figures["rel_error_" + label] = float("%.3g" % error)
        figures["result_device_" + label] = str(c.device)
        if not error < TOLERANCE[label]:
            bad.append("%s %.3g > %.0e" % (label, error, TOLERANCE[label]))
    if bad:
        raise Fail("matmul result differs from the reference (relative error %s)" % ", ".join(bad), figures)
    return "%dx%d matmul on %s matches float64 CPU reference" % (n, n, device), figures


def check_conv(ctx):
    torch = _require_torch(ctx)
    device = _device(ctx, torch)
    functional = torch.nn.functional
    figures = {"device": str(device)}
    if device.type == "cuda":
        figures["cudnn_available"] = bool(torch.backends.cudnn.is_available())
        figures["cudnn_enabled"] = bool(torch.backends.cudnn.enabled)
        figures["cudnn_version"] = cudnn_text(torch.backends.cudnn.version())
        if not figures["cudnn_available"]:
            raise Fail("cuDNN is not available to torch (torch.backends.cudnn.is_available() is False)",
                       figures)
    gen = torch.Generator().manual_seed(1)
    batch = max(1, min(ctx.batch_size, 32))
    x = torch.randn(batch, 16, 32, 32, generator=gen)
    w = torch.randn(32, 16, 3, 3, generator=gen) * 0.1
    grad_out = torch.randn(batch, 32, 32, 32, generator=gen)
    x_ref = x.double().requires_grad_()
    w_ref = w.double().requires_grad_()
    y_ref = functional.conv2d(x_ref, w_ref, padding=1)
    y_ref.backward(grad_out.double())
    with _fp32_precision(torch, False):
        xd = x.to(device).requires_grad_()
        wd = w.to(device).requires_grad_()
        y = functional.conv2d(xd, wd, padding=1)
        y.backward(grad_out.to(device))
        if device.type == "cuda":
            torch.cuda.synchronize()
    errors = {
        "rel_error_forward": _rel_error(torch, y, y_ref),
        "rel_error_grad_input": _rel_error(torch, xd.grad, x_ref.grad),
        "rel_error_grad_weight": _rel_error(torch, wd.grad, w_ref.grad),
    }
    figures.update((key, float("%.3g" % value)) for key, value in errors.items())
    figures["shape"] = list(x.shape)
    if y.device.type != device.type:
        raise Fail("convolution placed on the CPU: result on %s" % y.device, figures)
    if not max(errors.values()) < 1e-3:
        raise Fail("convolution result differs from the reference (max relative error %.3g)"
                   % max(errors.values()), figures)
    return "conv2d forward and backward on %s match float64 CPU reference" % device, figures


# --- speed ----------------------------------------------------------------------------------------

def time_cuda(torch, func, share_s, sleep=time.sleep):
    """Time ``func`` (one product) on the GPU as ``probe_common.plan_speed`` says, within ``share_s``
    seconds: (peak seconds per call, sustained seconds per call or None, plan). Device events bracket
    each timed loop; the first call (library handles, kernel choice) and the timing of one call that
    sizes the plan stay out of the figures."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)

    def timed(count):
        start.record()
        for _ in range(count):
            func()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1000.0

    func()
    torch.cuda.synchronize()
    plan = plan_speed(timed(1), share_s)
    peaks = []
    for _ in range(plan.windows):
        torch.cuda.synchronize()
        sleep(plan.pause_s)  # idle: the SM clock comes back from a power-capped state
        for _ in range(plan.warmup):
            func()
        torch.cuda.synchronize()
        peaks.append(timed(plan.iters) / plan.iters)
    sustained = None
    if plan.sustain_iters:
        for _ in range(plan.sustain_load):
            func()
        sustained = median([timed(plan.sustain_iters) / plan.sustain_iters
                            for _ in range(plan.sustain_batches)])
    return median(peaks), sustained, plan


def time_cpu(func, repeats=3):
    func()
    samples = []
    for _ in range(repeats):
        began = time.perf_counter()
        func()
        samples.append(time.perf_counter() - began)
    return median(samples)


def check_speed(ctx):
    torch = _require_torch(ctx)
    device = _device(ctx, torch)
    figures = {}
    n_cpu = min(ctx.matmul_size, 1024)
    cpu_a = torch.randn(n_cpu, n_cpu)
    cpu_b = torch.randn(n_cpu, n_cpu)
    cpu_out = torch.empty(n_cpu, n_cpu)
    cpu_s = time_cpu(lambda: torch.matmul(cpu_a, cpu_b, out=cpu_out))
    figures["cpu_fp32_tflops"] = round(tflops(n_cpu, cpu_s), 4)
    figures["cpu_n"] = n_cpu
    figures["cpu_threads"] = torch.get_num_threads()
    if device.type != "cuda":
        return "CPU fp32 matmul %.3f TFLOP/s (n=%d)" % (figures["cpu_fp32_tflops"], n_cpu), figures
    rows = _precisions(torch, device)
    share_s = speed_budget(ctx, len(rows))
    n = _speed_size(torch, device, ctx.matmul_size)
    figures["n"] = n
    figures["n_profile"] = ctx.matmul_size
    figures["method"] = ("CUDA events; peak: %d products after %d warm-up and an idle pause of %gs, median of %d "
                         "windows; sustained: after %gs of load, median of %d batches"
                         % (PEAK_ITERS, PEAK_WARMUP, PAUSE_S, PEAK_WINDOWS, SUSTAIN_LOAD_S, SUSTAIN_BATCHES))
    figures["budget_s_per_precision"] = round(share_s, 2)
    parts = []
    for label, dtype, allow_tf32 in rows:
        a = torch.randn(n, n, device=device, dtype=dtype)
        b = torch.randn(n, n, device=device, dtype=dtype)
        with _fp32_precision(torch, allow_tf32):
            peak_s, sustained_s, plan = time_cuda(torch, lambda a=a, b=b: torch.matmul(a, b), share_s)
        figures[label + "_tflops"] = round(tflops(n, peak_s), 2)
        figures[label + "_tflops_sustained"] = round(tflops(n, sustained_s), 2) if sustained_s else None
        figures[label + "_iters"] = plan.iters
        text = "%s %.1f" % (label, figures[label + "_tflops"])
        if sustained_s:
            text += " (%.1f)" % figures[label + "_tflops_sustained"]
        parts.append(text)
        del a, b
    figures["speedup_fp32_vs_cpu"] = round(figures["fp32_tflops"] / figures["cpu_fp32_tflops"], 1)
    figures["max_memory_reserved_mib"] = int(torch.cuda.max_memory_reserved() // (1024 * 1024))
    torch.cuda.empty_cache()
    return ("matmul n=%d TFLOP/s, peak (sustained): %s; fp32 %.0fx the CPU"
            % (n, ", ".join(parts), figures["speedup_fp32_vs_cpu"]), figures)


def _speed_size(torch, device, n):
    """``n``, or larger on a fast GPU (probe_common.speed_size), judged by an fp16 product; GPUs
    without tensor cores (before Volta) keep ``n``."""
    if torch.cuda.get_device_capability(device)[0] < 7 or not hasattr(torch.cuda, "mem_get_info"):
        return n
    a = torch.randn(n, n, device=device, dtype=torch.float16)
    b = torch.randn(n, n, device=device, dtype=torch.float16)
    torch.matmul(a, b)
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(3):
        torch.matmul(a, b)
    end.record()
    end.synchronize()
    product_s = start.elapsed_time(end) / 1000.0 / 3
    del a, b
    torch.cuda.empty_cache()
    return speed_size(n, product_s, torch.cuda.mem_get_info(device)[0])


# --- mixed precision and training ------------------------------------------------------------------

def check_amp(ctx):
    torch = _require_torch(ctx)
    device = _device(ctx, torch)
    torch.manual_seed(2)
    nn = torch.nn
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
    x = torch.randn(max(ctx.batch_size, 8), 256, device=device)
    if device.type == "cuda":
        major, _minor = torch.cuda.get_device_capability(device)
        bf16_ok = major >= 8 and getattr(torch.cuda, "is_bf16_supported", lambda: False)()
        dtype = torch.bfloat16 if bf16_ok else torch.float16
    else:
        dtype = getattr(torch, "bfloat16", None)
    if hasattr(torch, "autocast"):
        autocast = torch.autocast(device_type=device.type, dtype=dtype)
    elif device.type == "cuda":
        autocast, dtype = torch.cuda.amp.autocast(), torch.float16
    else:
        raise Skip("mixed precision on the CPU needs torch >= 1.10")
    with _fp32_precision(torch, False):
        reference = model(x)
    with autocast:
        out = model(x)
        loss = out.float().pow(2).mean()
    scaled = loss
    scaler = None
    if dtype == torch.float16 and device.type == "cuda":
        scaler = _grad_scaler(torch)
        scaled = scaler.scale(loss)
    scaled.backward()
    grads_finite = all(bool(torch.isfinite(p.grad).all()) for p in model.parameters())
    error = _rel_error(torch, out.float(), reference)
    figures = {"device": str(device), "dtype": str(dtype).replace("torch.", ""),
               "output_dtype": str(out.dtype).replace("torch.", ""),
               "rel_error_vs_fp32": float("%.3g" % error),
               "grad_scaler": scaler is not None, "grads_finite": grads_finite}
    if out.dtype != dtype:
        raise Fail("autocast did not run the linear layers in %s (output %s)" % (dtype, out.dtype), figures)
    if not grads_finite or not error < 5e-2:
        raise Fail("mixed-precision result differs from the reference (relative error %.3g, finite grads %s)"
                   % (error, grads_finite), figures)
    return "autocast %s on %s: relative error %.2g vs fp32" % (figures["dtype"], device, error), figures


def _grad_scaler(torch):
    amp = getattr(torch, "amp", None)
    if amp is not None and hasattr(amp, "GradScaler"):
        return amp.GradScaler("cuda")
    return torch.cuda.amp.GradScaler()


def check_train(ctx):
    torch = _require_torch(ctx)
    device = _device(ctx, torch)
    torch.manual_seed(3)
    gen = torch.Generator().manual_seed(3)
    batch = ctx.batch_size
    images = torch.randn(batch, 1, 28, 28, generator=gen)
    teacher = torch.randn(28 * 28, 10, generator=gen)
    labels = torch.argmax(images.reshape(batch, -1) @ teacher, dim=1)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 8, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
        torch.nn.Linear(8 * 13 * 13, 10),
    ).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    images, labels = images.to(device), labels.to(device)
    losses = []
    began = time.perf_counter()
    for _ in range(ctx.train_steps):
        optimizer.zero_grad()
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    seconds = time.perf_counter() - began
    on_device = all(p.device.type == device.type for p in model.parameters())
    figures = {"device": str(device), "batch": batch, "steps": ctx.train_steps,
               "loss_first": round(losses[0], 4), "loss_last": round(losses[-1], 4),
               "losses": [round(v, 4) for v in losses], "seconds": round(seconds, 3)}
    if not on_device:
        raise Fail("training placed on the CPU: parameters are not on %s" % device, figures)
    if not losses[-1] < losses[0] or any(v != v for v in losses):
        raise Fail("loss did not decrease: %.4f -> %.4f" % (losses[0], losses[-1]), figures)
    return ("%d steps of an MNIST-shaped CNN on %s: loss %.3f -> %.3f"
            % (ctx.train_steps, device, losses[0], losses[-1]), figures)


# --- several GPUs ----------------------------------------------------------------------------------

def _free_port():
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def allreduce_worker(rank, world, port, out_dir):
    """One process per GPU: all-reduce a tensor holding rank + 1 and write what arrived."""
    import datetime

    import torch
    import torch.distributed as dist

    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % port, world_size=world, rank=rank,
                            timeout=datetime.timedelta(seconds=60))
    try:
        tensor = torch.full((1 << 20,), float(rank + 1), device="cuda:%d" % rank)
        dist.all_reduce(tensor)
        torch.cuda.synchronize()
        began = time.perf_counter()
        dist.all_reduce(tensor)
        torch.cuda.synchronize()
        seconds = time.perf_counter() - began
        with open(os.path.join(out_dir, "rank%d" % rank), "w") as handle:
            handle.write("%r %r %r" % (float(tensor.min()) / world, float(tensor.max()) / world, seconds))
    finally:
        dist.destroy_process_group()


def check_allreduce(ctx):
    torch = _require_torch(ctx)
    _require_gpu(ctx)
    count = torch.cuda.device_count()
    if count < 2:
        raise Skip("%d GPU visible: the all-reduce needs two or more" % count)
    import torch.distributed as dist
    if not dist.is_available() or not dist.is_nccl_available():
        raise Fail("torch.distributed with NCCL is not available in this build")
    out_dir = tempfile.mkdtemp(prefix="envgen-allreduce-")
    torch.multiprocessing.spawn(allreduce_worker, args=(count, _free_port(), out_dir), nprocs=count,
                                join=True)
    # after the first all-reduce every element is S = n(n+1)/2; after the second, n * S
    expected = count * (count + 1) / 2.0
    figures = {"world_size": count, "expected_sum": expected, "backend": "nccl"}
    wrong = []
    for rank in range(count):
        with open(os.path.join(out_dir, "rank%d" % rank)) as handle:
            low, high, seconds = [float(v) for v in handle.read().split()]
        figures["rank%d_seconds" % rank] = round(seconds, 5)
        if low != expected or high != expected:
            wrong.append("rank %d got %s..%s" % (rank, low, high))
    if wrong:
        raise Fail("all-reduce result differs from the reference sum %s: %s" % (expected, "; ".join(wrong)),
                   figures)
    return "NCCL all-reduce over %d GPUs gives the right sum" % count, figures


def checks():
    return [
        ("torch.version", check_version),
        ("torch.devices", check_devices),
        ("torch.kernels", check_kernels),
        ("torch.matmul", check_matmul),
        ("torch.conv", check_conv),
        ("torch.speed", check_speed),
        ("torch.amp", check_amp),
        ("torch.train", check_train),
        ("torch.allreduce", check_allreduce),
    ]


def facts_after(ctx):
    facts = ctx.frameworks.get(FRAMEWORK)
    if facts is not None:
        facts["loaded_libraries"] = loaded_libraries()
