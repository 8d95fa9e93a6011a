"""Self-authentication (app/ops/software.py): each file a wheel's RECORD lists is read
back and compared with the sha256 recorded there."""

from __future__ import annotations

import importlib.metadata as metadata
import random
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from app.ops.software import _summary, _wheel, file_hash, lock_problems

# sha256 of no bytes, urlsafe base64 without padding, as RECORD writes it (PEP 376/427).
EMPTY = "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"


def installed(site: Path) -> metadata.Distribution:
    """A distribution of two modules, one console script and its RECORD."""
    (site / "pkg").mkdir(parents=True)
    (site / "pkg" / "__init__.py").write_bytes(b"")
    (site / "pkg" / "rules.py").write_bytes(b"RATE = 25\n")
    info = site / "pkg-1.0.dist-info"
    info.mkdir()
    rules = file_hash(site / "pkg" / "rules.py")
    (info / "RECORD").write_text(
        f"pkg/__init__.py,{EMPTY},0\npkg/rules.py,{rules},10\npkg-1.0.dist-info/RECORD,,\n"
    )
    return metadata.PathDistribution(info)


def test_a_file_hash_is_written_as_record_writes_it(tmp_path: Path) -> None:
    (tmp_path / "empty").write_bytes(b"")
    assert file_hash(tmp_path / "empty") == EMPTY


def test_an_untouched_install_passes(tmp_path: Path) -> None:
    hashes, problems = _wheel(installed(tmp_path))
    assert problems == []
    assert [path for path, _ in hashes] == ["pkg/__init__.py", "pkg/rules.py"]


def test_a_changed_module_is_named(tmp_path: Path) -> None:
    dist = installed(tmp_path)
    before, _ = _wheel(dist)
    (tmp_path / "pkg" / "rules.py").write_bytes(b"RATE = 50\n")
    (tmp_path / "pkg" / "__init__.py").unlink()
    _, problems = _wheel(dist)
    assert [p.split(":")[0] for p in problems] == ["pkg/__init__.py", "pkg/rules.py"]
    assert "missing" in problems[0] and "changed" in problems[1]
    # The identity is over what was recorded: the same install, the same sha256.
    assert _summary(before) == _summary(_wheel(dist)[0])


def test_the_identity_changes_with_any_recorded_hash() -> None:
    one = [("pkg/a.py", EMPTY), ("pkg/b.py", EMPTY)]
    assert _summary(one) == _summary(list(reversed(one)))  # order of RECORD aside
    assert _summary(one) != _summary([("pkg/a.py", EMPTY), ("pkg/b.py", "sha256=x")])


def test_the_lock_against_the_distributions_installed() -> None:
    pytest_version = metadata.version("pytest")
    lock = (
        "# a comment\n"
        f"pytest=={pytest_version} \\\n    --hash=sha256:00\n"
        "pluggy==0.0.1 \\\n"
        "no-such-distribution-here==1.0 \\\n"
    )
    assert lock_problems(lock) == [
        f"pluggy: locked 0.0.1, installed {metadata.version('pluggy')}",
        "no-such-distribution-here: locked 1.0, not installed",
    ]


hashes = st.lists(
    st.tuples(st.from_regex(r"[a-z]{1,8}/[a-z]{1,8}\.py", fullmatch=True), st.text(min_size=1)),
    min_size=1,
    max_size=20,
    unique_by=lambda pair: pair[0],
)


@given(hashes, st.randoms())
def test_one_identity_whatever_the_order_of_the_record(
    recorded: list[tuple[str, str]], rng: random.Random
) -> None:
    shuffled = list(recorded)
    rng.shuffle(shuffled)
    assert _summary(shuffled) == _summary(recorded)


@given(hashes, st.data())
def test_another_identity_when_any_recorded_hash_differs(
    recorded: list[tuple[str, str]], data: st.DataObject
) -> None:
    index = data.draw(st.integers(0, len(recorded) - 1))
    path, digest = recorded[index]
    changed = [*recorded[:index], (path, digest + "x"), *recorded[index + 1 :]]
    assert _summary(changed) != _summary(recorded)
