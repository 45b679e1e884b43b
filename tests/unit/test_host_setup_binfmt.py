"""scripts/host-setup's arm64 step (register_binfmt), sourced, on a binfmt_misc directory of the test's own: the
entries are written as the kernel shows them (/proc/sys/fs/binfmt_misc/qemu-aarch64 on this Debian 12 host after
`apt-get install qemu-user-static`), so the host's own registration is never touched."""

from __future__ import annotations

import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "host-setup"
ENTRY = """enabled
interpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P
flags: {flags}
offset 0
magic 7f454c460201010000000000000000000200b700
mask ffffffffffffff00fffffffffffffffffeffffff
"""


def _register(binfmt: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", f'. "{SCRIPT}"; BINFMT="{binfmt}"; register_binfmt aarch64'],
                          capture_output=True, text=True, check=False, timeout=30)


def test_an_entry_with_the_f_flag_is_kept_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "register").write_text("", encoding="utf-8")
    (tmp_path / "qemu-aarch64").write_text(ENTRY.format(flags="PF"), encoding="utf-8")
    done = _register(tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "host-setup: binfmt: qemu-aarch64 registered (flags PF)"
    assert (tmp_path / "register").read_text(encoding="utf-8") == ""  # nothing written to the kernel


def test_an_entry_without_the_f_flag_is_one_line_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "register").write_text("", encoding="utf-8")
    (tmp_path / "qemu-aarch64").write_text(ENTRY.format(flags="P"), encoding="utf-8")
    done = _register(tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "host-setup: ERROR: binfmt: qemu-aarch64 is registered without the F flag (P): containers cannot find its "
        "interpreter; update-binfmts --disable qemu-aarch64, then run this again"]


def test_a_missing_entry_is_registered_from_debians_spec_with_f(tmp_path: Path) -> None:
    if not Path("/usr/share/binfmts/qemu-aarch64").is_file():
        (tmp_path / "register").write_text("", encoding="utf-8")
        assert "is not registered" in _register(tmp_path).stderr  # no qemu-user-static: said, not guessed
        return
    (tmp_path / "register").write_text("", encoding="utf-8")
    done = _register(tmp_path)
    written = (tmp_path / "register").read_text(encoding="utf-8")
    assert written.startswith(":qemu-aarch64:M:0:\\x7f\\x45\\x4c\\x46") and written.endswith(":PF\n"), written
    assert done.returncode == 1 and "is not registered" in done.stderr  # a plain file: no kernel made the entry
