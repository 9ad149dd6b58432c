"""Model files are data: a crafted model zip whose pickle would create a file must not run,
wherever a model is named (``sb3:`` agents in every command, ``kc-sim train --resume``),
and every malformed model file gives one line and exit 2.

The payload is real: :func:`test_the_payload_runs_under_sb3s_own_loader` shows sb3's loader
executing it, so the other tests, where the marker file must stay absent, can fail."""

from __future__ import annotations

import base64
import importlib.util
import io
import json
import pickle
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from kc_sim.env.obs_planes import SIZES
from kc_sim.errors import UserError
from kc_sim.learn.policy_net import FORMAT, PolicyNet
from kc_sim.net import model_file as mf
from tests.faults.hostile import kc, one_line_error


class _Payload:
    """Unpickling this writes ``ran`` into the marker file."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return exec, (f"open({self.marker!r}, 'w').write('ran')",)


def sb3_data(marker) -> bytes:
    """An sb3 ``data`` entry whose observation space is the payload (sb3 unpickles it on load)."""
    blob = base64.b64encode(pickle.dumps(_Payload(marker))).decode()
    return json.dumps({"observation_space": {":type:": "<class 'gymnasium.spaces.box.Box'>",
                                             ":serialized:": blob}}).encode()


def evil_sb3_zip(path, marker):
    """An sb3 model file (as sb3 lays it out) carrying the payload, and no kc-sim part."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", sb3_data(marker))
        z.writestr("_stable_baselines3_version", "2.3.0")
        z.writestr("policy.pth", b"not read")
    return path


def small_net(hidden: int = 8, seed: int = 0) -> PolicyNet:
    rng = np.random.default_rng(seed)
    w = [rng.normal(size=(hidden, SIZES["planes"])).astype(np.float32), rng.normal(size=(449, hidden)).astype(np.float32)]
    b = [np.zeros(hidden, np.float32), np.zeros(449, np.float32)]
    return PolicyNet(w, b, "tanh", {"observation": "planes", "players": 2})


def kc_sim_model_beside_payload(path, marker):
    """A valid kc-sim model part next to sb3's entries, one of which is the payload."""
    evil_sb3_zip(path, marker)
    small_net().write_into(path)
    return path


@pytest.mark.skipif(importlib.util.find_spec("sb3_contrib") is None, reason="needs sb3-contrib (the train extra)")
def test_the_payload_runs_under_sb3s_own_loader(tmp_path):
    marker = tmp_path / "ran"
    evil = evil_sb3_zip(tmp_path / "evil.zip", marker)
    subprocess.run([sys.executable, "-c", f"from sb3_contrib import MaskablePPO\ntry: MaskablePPO.load({str(evil)!r})\n"
                    "except Exception: pass"], capture_output=True, timeout=120)
    assert marker.read_text() == "ran"


@pytest.mark.parametrize("command", [
    ["tournament", "--agents", "{agent},random", "--rounds", "20", "--jobs", "1", "--quiet", "--out", "{tmp}/run"],
    ["bench-agent", "{agent}", "--baselines", "random", "--rounds", "20", "-j", "1"],
    ["record", "--agents", "{agent},random", "--rounds", "1", "-o", "{tmp}/r.jsonl"],
])
def test_a_crafted_sb3_zip_never_runs(tmp_path, command):
    marker = tmp_path / "ran"
    agent = f"sb3:{evil_sb3_zip(tmp_path / 'evil.zip', marker)}"
    r = kc(*[a.format(agent=agent, tmp=tmp_path) for a in command])
    one_line_error(r, "without kc-sim's part", "unpickles")
    assert not marker.exists()


def test_play_refuses_it_too(tmp_path):
    marker = tmp_path / "ran"
    r = kc("play", "--agents", f"human,sb3:{evil_sb3_zip(tmp_path / 'evil.zip', marker)}", "--seed", "1",
           "-o", tmp_path / "p.jsonl")
    one_line_error(r, "without kc-sim's part")
    assert not marker.exists()


def test_kc_sims_part_plays_and_sb3s_entries_are_never_opened(tmp_path):
    marker = tmp_path / "ran"
    model = kc_sim_model_beside_payload(tmp_path / "model.zip", marker)
    r = kc("record", "--agents", f"sb3:{model},random", "--rounds", "2", "-o", tmp_path / "r.jsonl")
    assert r.returncode == 0, r.stderr
    assert not marker.exists()
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) == 2


def test_train_resume_refuses_a_file_it_did_not_write(tmp_path):
    marker = tmp_path / "ran"
    for name, make in (("evil.zip", evil_sb3_zip), ("looks_ours.zip", kc_sim_model_beside_payload)):
        model = make(tmp_path / name, marker)
        r = kc("train", "--method", "ppo", "--resume", "--steps", "5000", "--envs", "4", "--out", model)
        one_line_error(r, "cannot resume training from", "did not write this file", "unpickles")
        assert not marker.exists()


def test_written_record_is_by_content(tmp_path, monkeypatch):
    monkeypatch.setenv("KC_SIM_STATE_DIR", str(tmp_path / "state"))
    path = tmp_path / "m.zip"
    digest = small_net().write_into(path)
    with pytest.raises(UserError, match="did not write this file"):
        mf.require_written(path, "resume training from")
    mf.remember_written(path, digest)
    copy = tmp_path / "copy.zip"
    copy.write_bytes(path.read_bytes())
    assert mf.require_written(copy, "resume training from") == digest      # the same bytes
    with zipfile.ZipFile(copy, "a") as z:
        z.writestr("data", b"{}")
    with pytest.raises(UserError, match="did not write this file"):
        mf.require_written(copy, "resume training from")
    mf.forget_written(digest)
    with pytest.raises(UserError, match="did not write this file"):
        mf.require_written(path, "resume training from")


# --- the model-file reader: round trip and every kind of malformed file -------------------------------

def test_round_trip_keeps_arrays_header_and_other_entries(tmp_path):
    path = tmp_path / "m.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("notes.txt", "kept")
    arrays = {"w": np.arange(12, dtype=np.float32).reshape(3, 4), "steps": np.array([5], np.int64),
              "mask": np.array([True, False])}
    mf.write_model(path, mf.Model("test/thing", 3, {"a": [1, 2]}, arrays), base=path)
    m = mf.read_model(path, format="test/thing", versions=(3,))
    assert (m.format, m.version, m.header) == ("test/thing", 3, {"a": [1, 2]})
    assert all(np.array_equal(m.arrays[k], v) and m.arrays[k].dtype == v.dtype for k, v in arrays.items())
    with zipfile.ZipFile(path) as z:
        assert z.read("notes.txt") == b"kept"
    net = small_net()
    net.write_into(tmp_path / "p.zip")
    back = PolicyNet.read_from(tmp_path / "p.zip")
    assert all(np.array_equal(a, b) for a, b in zip(back.weights + back.biases, net.weights + net.biases))
    assert back.meta == net.meta and back.activation == "tanh"


def _npy(a, allow_pickle=False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=allow_pickle)
    return buf.getvalue()


def _zip(path, entries: dict):
    with zipfile.ZipFile(path, "w") as z:
        for k, v in entries.items():
            z.writestr(k, v if isinstance(v, (bytes, str)) else json.dumps(v))
    return path


def _header(arrays=None, **over):
    h = {"encoding": 1, "format": "test/thing", "version": 1, "header": {},
         "arrays": arrays if arrays is not None else {"w": {"dtype": "<f4", "shape": [2]}}, "others": []}
    return h | over


W = _npy(np.zeros(2, np.float32))
HOSTILE = {
    "not a zip": (b"plain text", "not a zip file"),
    "truncated zip": (None, "not a zip file"),
    "no header": ({"data": b"{}"}, "no kc-sim/header.json inside"),
    "deep header": ({"kc-sim/header.json": "[" * 100_000}, "nested 100,000 deep"),
    "huge header": ({"kc-sim/header.json": " " * (mf.MAX_HEADER_BYTES + 1)}, "over the limit"),
    "header not an object": ({"kc-sim/header.json": "[1]"}, "expected a header with the fields"),
    "unknown encoding": ({"kc-sim/header.json": _header(encoding=9), "kc-sim/arrays/w.npy": W}, "encoding 9"),
    "pickled array": ({"kc-sim/header.json": _header(), "kc-sim/arrays/w.npy": _npy(np.array([{}, 1], object), True)},
                      "holds object"),
    "object dtype declared": ({"kc-sim/header.json": _header({"w": {"dtype": "|O", "shape": [2]}}),
                               "kc-sim/arrays/w.npy": W}, "array 'w' declared as"),
    "shape lie": ({"kc-sim/header.json": _header({"w": {"dtype": "<f4", "shape": [3]}}), "kc-sim/arrays/w.npy": W},
                  "but the header declares <f4 [3]"),
    "extra entry of ours": ({"kc-sim/header.json": _header(), "kc-sim/arrays/w.npy": W, "kc-sim/x.pkl": b"x"},
                            "unexpected entries ['kc-sim/x.pkl']"),
    "undeclared other entry": ({"kc-sim/header.json": _header(), "kc-sim/arrays/w.npy": W, "data": b"{}"},
                               "unexpected entries ['data']"),
    "missing array": ({"kc-sim/header.json": _header()}, "missing entries"),
    "huge array declared": ({"kc-sim/header.json": _header({"w": {"dtype": "<f8", "shape": [2**20, 2**20]}})},
                            "arrays of over"),
    "bad array name": ({"kc-sim/header.json": _header({"../x": {"dtype": "<f4", "shape": [2]}})}, "array name"),
    "not npy": ({"kc-sim/header.json": _header(), "kc-sim/arrays/w.npy": b"\x93NUMPY garbage"}, "not a .npy array"),
    "short data": ({"kc-sim/header.json": _header(), "kc-sim/arrays/w.npy": W[:-4]}, "bytes of data"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_model_files_are_one_line_user_errors(tmp_path, case):
    content, says = HOSTILE[case]
    path = tmp_path / "m.zip"
    if content is None:
        small_net().write_into(path)
        path.write_bytes(path.read_bytes()[:300])
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        _zip(path, content)
    with pytest.raises(UserError) as e:
        mf.read_model(path)
    assert says in str(e.value) and "\n" not in str(e.value)
    assert len(str(e.value)) < 400


def test_policy_checks_its_layers(tmp_path):
    bad = small_net()
    bad.weights[1] = np.zeros((449, 5), np.float32)             # does not take the 8 values layer 0 gives
    bad.write_into(tmp_path / "m.zip")
    with pytest.raises(UserError, match="each taking what the one before gives"):
        PolicyNet.read_from(tmp_path / "m.zip")
    mf.write_model(tmp_path / "o.zip", mf.Model("other/format", 1, {}, {}))
    with pytest.raises(UserError, match=f"expected format '{FORMAT}'"):
        PolicyNet.read_from(tmp_path / "o.zip")


def test_a_hostile_model_through_the_command_line(tmp_path):
    path = _zip(tmp_path / "m.zip", HOSTILE["deep header"][0])
    one_line_error(kc("bench-agent", f"sb3:{path}", "--rounds", "20"), "nested 100,000 deep")
    path = _zip(tmp_path / "w.zip", {"kc-sim/header.json": json.dumps(
        {"encoding": 1, "format": FORMAT, "version": 1, "header": {"observation": "planes"}, "others": [],
         "arrays": {"w0": {"dtype": "<f4", "shape": [4, 7]}, "b0": {"dtype": "<f4", "shape": [4]}}}),
        "kc-sim/arrays/w0.npy": _npy(np.zeros((4, 7), np.float32)), "kc-sim/arrays/b0.npy": _npy(np.zeros(4, np.float32))})
    one_line_error(kc("record", "--agents", f"sb3:{path},random", "-o", tmp_path / "r.jsonl"),
                   "a network from 7 inputs to 4 actions")
