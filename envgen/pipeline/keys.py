"""The signing key envgen keeps for the user, and the public keys the user trusts.

``<state_dir>/keys/signing-ed25519.pem``: this user's private ed25519 key (PKCS#8 PEM, 0600), made on first
use; ``<state_dir>/keys/trusted/<keyid>.pub``: public keys (SubjectPublicKeyInfo PEM) whose validations this
user accepts, the own key's among them. A key's id is the sha256 of its raw 32-byte public key, in hex (the
``keyid`` of a DSSE signature). `envgen key` shows, exports and trusts them; ``cryptography`` does the work.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from envgen.errors import InputError
from envgen.files import USER_FILE, write_atomically

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

PRIVATE = "signing-ed25519.pem"
TRUSTED = "trusted"


def key_dir(state_dir: Path) -> Path:
    return Path(state_dir) / "keys"


def keyid_of(public: Ed25519PublicKey) -> str:
    from cryptography.hazmat.primitives import serialization

    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def public_pem(public: Ed25519PublicKey) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


@dataclass(frozen=True)
class SigningKey:
    private: Ed25519PrivateKey
    keyid: str
    path: Path


def signing_key(state_dir: Path) -> SigningKey:
    """This user's key, made (and trusted) on first use. Two envgens making it at once keep the first one
    written: the file is linked into place, never replaced."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    path = key_dir(state_dir) / PRIVATE
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(path.parent, 0o700)
        fresh = Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")  # 0600
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(fresh)
                handle.flush()
                os.fsync(handle.fileno())
            with contextlib.suppress(FileExistsError):
                os.link(tmp, path)
        finally:
            os.unlink(tmp)
    try:
        private = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise InputError(f"envgen's signing key {path} cannot be read ({exc})",
                         fix=f"restore it from a backup, or remove {path} to make a new one (images it signed "
                             "are then validated only where its public key is trusted)") from None
    if not isinstance(private, Ed25519PrivateKey):
        raise InputError(f"envgen's signing key {path} is not an ed25519 key", fix=f"remove {path} to make one")
    keyid = keyid_of(private.public_key())
    own = key_dir(state_dir) / TRUSTED / f"{keyid}.pub"
    if not own.is_file():
        write_atomically(own, public_pem(private.public_key()), mode=USER_FILE)
    return SigningKey(private, keyid, path)


def load_public(data: bytes, source: str) -> Ed25519PublicKey:
    """A public ed25519 key from PEM (what `envgen key export` writes, or cosign's ED25519 public key)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        public = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as exc:
        raise InputError(f"{source} is not a PEM public key ({str(exc).splitlines()[0]})",
                         fix="give the file `envgen key export` wrote on the signing host") from None
    if not isinstance(public, Ed25519PublicKey):
        raise InputError(f"{source} holds a {type(public).__name__}, not an ed25519 public key",
                         fix="give the file `envgen key export` wrote on the signing host")
    return public


def trusted_keys(state_dir: Path) -> dict[str, Ed25519PublicKey]:
    """The keys this user trusts, by key id (the own key once it exists); an unreadable file is skipped."""
    found: dict[str, Ed25519PublicKey] = {}
    folder = key_dir(state_dir) / TRUSTED
    for path in sorted(folder.glob("*.pub")) if folder.is_dir() else []:
        with contextlib.suppress(OSError, InputError):
            public = load_public(path.read_bytes(), str(path))
            found[keyid_of(public)] = public
    return found


def trust(state_dir: Path, source: Path) -> str:
    """Trust the public key in ``source``; returns its key id."""
    try:
        data = Path(source).expanduser().read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the public key {source} ({exc.strerror})",
                         fix="give the file `envgen key export` wrote") from None
    public = load_public(data, str(source))
    keyid = keyid_of(public)
    write_atomically(key_dir(state_dir) / TRUSTED / f"{keyid}.pub", public_pem(public), mode=USER_FILE)
    return keyid


def untrust(state_dir: Path, keyid: str) -> str:
    """Stop trusting the key whose id starts with ``keyid`` (12 characters suffice); its id."""
    matches = [k for k in trusted_keys(state_dir) if k.startswith(keyid.lower())] if len(keyid) >= 8 else []
    if len(matches) != 1:
        raise InputError(f"key id {keyid!r} names {'no' if not matches else 'more than one'} trusted key",
                         fix="give at least 8 characters of an id `envgen key list` shows")
    (key_dir(state_dir) / TRUSTED / f"{matches[0]}.pub").unlink()
    return matches[0]


def key_action(action: str, state_dir: Path, argument: str | None = None, out: Path | None = None) -> str:
    """`envgen key show|export|trust FILE|untrust KEYID`: what the command prints."""
    if action == "show":
        own = signing_key(state_dir)
        lines = [f"signing key: {own.keyid} ({own.path}, private, 0600)", "trusted keys:"]
        lines += [f"  {keyid}{' (this user)' if keyid == own.keyid else ''}" for keyid in trusted_keys(state_dir)]
        return "\n".join(lines)
    if action == "export":
        pem = public_pem(signing_key(state_dir).private.public_key())
        if out is None:
            return pem.decode().rstrip("\n")
        write_atomically(Path(out).expanduser(), pem, mode=USER_FILE)
        return f"wrote the public key {signing_key(state_dir).keyid[:12]} to {out}; on another host: `envgen key " \
               f"trust {Path(out).name}`"
    if action in ("trust", "untrust") and argument:
        if action == "trust":
            return f"trusted key {trust(state_dir, Path(argument))}: its signed validations now validate images here"
        return f"no longer trusted: {untrust(state_dir, argument)}"
    raise InputError(f"envgen key {action} {argument or ''}".strip() + " is not a key command",
                     fix="use `envgen key show`, `envgen key export [-o FILE]`, `envgen key trust FILE` or "
                         "`envgen key untrust KEYID`")
