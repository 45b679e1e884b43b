"""Whether TensorFlow and torch can share one environment: the NVIDIA libraries both install from pip must fit one
site-packages."""

from __future__ import annotations

from envgen.kb.versions import major, vtuple
from envgen.suggest.parts import TfPart, TorchPart


def share(tf: TfPart, torch: TorchPart) -> tuple[bool, str, str | None]:
    """Can both frameworks' NVIDIA libraries live in one site-packages? (ok, why not, shared cuDNN pin).

    NVIDIA's wheels install into site-packages/nvidia/<family>/lib whatever their CUDA major, so two CUDA majors
    collide on file names (libcudnn.so.8, libcurand.so.10, libnccl.so.2), and two exact pins of one distribution
    cannot both be installed."""
    if torch.cudnn_major is None:
        return True, "", None  # torch bundles private copies
    t_major = major(torch.build.cuda)
    tf_major = major(tf.build.cuda)
    if tf.libraries is None:  # tensorflow[and-cuda]: exact nvidia-* pins of its own
        return False, (
            f"tensorflow[and-cuda] {tf.version} and torch {torch.build.label} both install NVIDIA's pip wheels "
            f"(nvidia-*-cu{tf_major} / -cu{t_major}) with their own exact pins into the same site-packages/nvidia"
        ), None
    if tf.libraries.pip_cudnn is None:
        return True, "", None  # TF's libraries come from conda, torch's from its wheels
    tf_cudnn_major = major(tf.libraries.cudnn)
    if t_major != tf_major and torch.cudnn_major == tf_cudnn_major:
        return False, (
            f"TensorFlow {tf.version}'s nvidia-cudnn-cu{tf_major} and torch {torch.build.label}'s "
            f"nvidia-cudnn-cu{t_major} both install site-packages/nvidia/cudnn/lib/libcudnn.so.{tf_cudnn_major}"
        ), None
    if t_major != tf_major:
        return True, "", None
    if torch.cudnn_major != tf_cudnn_major:
        return False, (
            f"TensorFlow {tf.version} needs nvidia-cudnn-cu{tf_major} {tf_cudnn_major}.x, torch "
            f"{torch.build.label} pins cuDNN {torch.cudnn_major}.x of the same distribution"
        ), None
    pin = torch.wheels.pin(torch.build.cuda) if torch.wheels else None
    if pin is None or vtuple(pin) < vtuple(tf.build.cudnn):
        return False, (
            f"torch {torch.build.label}'s nvidia-cudnn-cu{t_major} pin is "
            f"{'not recorded' if pin is None else pin + ', older than TensorFlow needs'}"
        ), None
    return True, "", pin
