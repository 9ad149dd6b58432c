"""The plumbing of kc_sim.support: a temporary's name and how it is recognised, a file's
digest, and the notice line on stderr."""

from __future__ import annotations

import hashlib
import os

from kc_sim.support.atomic import TEMPORARIES, atomic_file, is_temporary_of, temporary_of
from kc_sim.support.digest import file_digest, file_sha256
from kc_sim.support.notice import notice


def test_an_output_is_written_under_its_temporary_which_is_recognised_by_the_output(tmp_path):
    out = tmp_path / "r.jsonl"
    tmp = temporary_of(out)
    assert tmp == tmp_path / f".r.jsonl.{os.getpid()}.tmp"
    with atomic_file(out) as f:
        assert tmp.exists() and not out.exists()
        f.write("x")
    assert out.read_text() == "x" and not tmp.exists()
    assert is_temporary_of(tmp, out) and is_temporary_of(str(tmp), out)
    assert list(tmp_path.glob(TEMPORARIES)) == []
    tmp.write_text("left by a kill")
    assert list(tmp_path.glob(TEMPORARIES)) == [tmp]
    assert not is_temporary_of(tmp_path / "sub" / tmp.name, out)       # another folder
    assert not is_temporary_of(tmp_path / ".other.1.tmp", out)
    assert not is_temporary_of(None, out)


def test_a_file_digest_is_its_size_and_sha256_read_in_blocks(tmp_path):
    data = os.urandom(3 * (1 << 20) + 17)            # more than one block
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    want = hashlib.sha256(data).hexdigest()
    assert file_digest(path) == {"size": len(data), "sha256": want}
    assert file_sha256(path) == want


def test_a_notice_is_one_line_on_stderr(capsys):
    notice("waiting for the run")
    notice("the child ended", over_progress=True)      # not a terminal: nothing to clear
    assert capsys.readouterr().err == "kc-sim: waiting for the run\nkc-sim: the child ended\n"
