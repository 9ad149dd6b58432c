"""How the round loops call the policies: through function pointers, or compiled in.

The loops of :mod:`kc_sim.core.loop` are written once and take their policies as one
argument, ``policies``; what they do with it is decided by its numba type, here:

* a tuple of 8 compiled policies (``POLICIES_TYPE``, function pointers): the **generic**
  loop. One compiled loop serves every policy; each decision is a call through a pointer,
  its action checked for legality, and every seat's memory is zeroed and seeded each round.
* a :class:`Seated` value of a :class:`PolicySet`: the loop **compiled for that set of
  policies**. The set is part of the value's numba type (:class:`PolicySetType`), so numba
  compiles the loop once per set and keeps it in its on-disk cache under that type, like any
  other signature; the value itself carries only which policy plays each seat (``slots``).
  A **trusted** policy is compiled into the loop (an ``alwaysinline`` call, which LLVM
  inlines: no call boundary at all), its action is not checked again, and the loop prepares
  only as much of its memory each round as it declares (``mem_words``). Every other policy is
  called directly, its action checked, its whole memory zeroed and seeded, exactly as in the
  generic loop.

Trusted policies are the agents kc-sim ships (the registry says which: those registered by
kc-sim's own distribution, :mod:`kc_sim.play.agents.registry`); every one is checked against the
reference's legal moves by the agent tests and ``kc-sim bench-agent --check``, and the
compiled-in loop is checked to play the same rows as the generic one
(tests/core/test_policy_set.py). A policy written by a user keeps the check: an illegal
action still stops the run at once.

A policy can be compiled in when it can be found again by name in another process: a
numba dispatcher defined at module level of a module with a source file
(:func:`policy_ref`). Its name and a hash of its source file are in the type, so an
edited policy file gets a new loop (as with numba's own cache, a change in a file it
imports from is not seen; kc-sim's own sources are covered by the cache folder's hash,
:mod:`kc_sim.core.cache`). Closures (``sampler:N``) and policies made in a notebook are not
nameable and play in the generic loop.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.dispatcher import Dispatcher
from numba.extending import (
    NativeValue,
    intrinsic,
    make_attribute_wrapper,
    models,
    overload,
    register_model,
    typeof_impl,
    unbox,
)

from kc_sim.core.layout import MAX_SEATS
from kc_sim.core.policy import (
    MEM_SIZE,
    POLICY_SIG,
    POLICY_TYPE,
    SEAT_STREAM,
    seed_policies,
)
from kc_sim.core.rng import derive

__all__ = ["POLICIES_TYPE", "Entry", "PolicySet", "PolicySetType", "Seated", "call_policy", "checks",
           "policy_ref", "seed_seats"]

#: the generic loop's policies: one compiled policy (a function pointer) per match seat
POLICIES_TYPE = types.UniTuple(POLICY_TYPE, MAX_SEATS)
_SLOTS = types.UniTuple(types.int64, MAX_SEATS)


class Entry(NamedTuple):
    """One policy of a :class:`PolicySet`, as the compiled loop sees it."""

    ref: str            # module:qualname, where to find it again
    source: str         # hash of its source file
    trusted: bool       # compiled into the loop, its actions not checked again
    mem_words: int      # words of its memory it relies on: mem[0] seeded, mem[1:mem_words] zeroed


_refs: dict = {}


def policy_ref(policy) -> tuple[str, str] | None:
    """``(module:qualname, hash of its source file)`` for a policy that can be found again by
    name, else None (not a dispatcher, a closure, not reachable by its module and name, no
    source file). Worked out once per policy (its source as first seen in this process)."""
    if not isinstance(policy, Dispatcher):
        return None
    if policy not in _refs:
        _refs[policy] = _ref(policy)
    return _refs[policy]


def _ref(policy) -> tuple[str, str] | None:
    py = policy.py_func
    if py.__closure__ or "<" in py.__qualname__:
        return None
    module = sys.modules.get(py.__module__)
    if module is None or getattr(module, py.__qualname__, None) is not policy:
        return None
    try:
        source = Path(inspect.getfile(py)).read_bytes()
    except (OSError, TypeError):
        return None
    return f"{py.__module__}:{py.__qualname__}", hashlib.sha256(source).hexdigest()[:16]


def _resolve(ref: str):
    """The policy named ``module:qualname`` (its module is imported if it is not yet)."""
    module, name = ref.split(":")
    mod = sys.modules.get(module) or importlib.import_module(module)
    return getattr(mod, name)


class PolicySetType(types.Type):
    """The numba type of a :class:`Seated` value: the policies (as :class:`Entry`) are the type,
    so each set gets its own compiled loop; the value holds the seats' slots."""

    def __init__(self, entries: tuple):
        self.entries = tuple(Entry(*e) for e in entries)
        super().__init__(name="PolicySet(" + ", ".join(e.ref for e in self.entries) + ")")

    @property
    def key(self):
        return self.entries

    def __reduce__(self):            # numba's cache index pickles signatures: by the entries alone
        return PolicySetType, (self.entries,)

    def policies(self) -> list:
        """The compiled policies, by slot (found again by name)."""
        return [_resolve(e.ref) for e in self.entries]


@register_model(PolicySetType)
class _PolicySetModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, [("slots", _SLOTS)])


make_attribute_wrapper(PolicySetType, "slots", "slots")


class Seated:
    """What the loops take as ``policies`` for a :class:`PolicySet`: the set and the slot of
    each match seat's policy (unused seats 0)."""

    __slots__ = ("set", "slots")

    def __init__(self, policy_set: "PolicySet", slots: tuple):
        self.set = policy_set
        self.slots = slots


@typeof_impl.register(Seated)
def _typeof_seated(val, c):
    return val.set.numba_type


@unbox(PolicySetType)
def _unbox_seated(typ, obj, c):
    slots_obj = c.pyapi.object_getattr_string(obj, "slots")
    slots = c.unbox(_SLOTS, slots_obj)
    c.pyapi.decref(slots_obj)
    value = cgutils.create_struct_proxy(typ)(c.context, c.builder)
    value.slots = slots.value
    return NativeValue(value._getvalue(), is_error=slots.is_error)


class PolicySet:
    """A set of distinct nameable compiled policies, in a fixed order (by name), for which the
    loops are compiled once (see the module docstring). ``policies``: ``(policy, trusted,
    mem_words)`` for each; :meth:`seat` gives the loops' argument for a seating."""

    def __init__(self, policies):
        by_ref = {}
        for policy, trusted, mem_words in policies:
            ref = policy_ref(policy)
            if ref is None:
                raise ValueError(f"{policy!r} cannot be found again by name: it plays in the generic loop")
            words = int(mem_words) if trusted else MEM_SIZE
            by_ref[ref] = (policy, Entry(*ref, bool(trusted), min(max(words, 0), MEM_SIZE)))
        order = sorted(by_ref)
        self.policies = tuple(by_ref[r][0] for r in order)
        self.entries = tuple(by_ref[r][1] for r in order)
        self.numba_type = PolicySetType(self.entries)

    def seat(self, policies) -> Seated:
        """The loops' ``policies`` argument for this seating (one policy per match seat)."""
        slots = [0] * MAX_SEATS
        for s, p in enumerate(policies):
            slots[s] = self.policies.index(p)
        return Seated(self, tuple(slots))

    @property
    def trusted(self) -> bool:
        """True when no policy of the set has its actions checked."""
        return all(e.trusted for e in self.entries)

    def __repr__(self):
        return f"PolicySet({', '.join(e.ref for e in self.entries)})"


# --- what the loops call: one name each, its code chosen by the type of ``policies`` ---------

def call_policy(policies, k, st, seat, mem):
    """The action of match seat ``k``'s policy for round seat ``seat`` (compiled code only)."""
    raise TypeError("compiled code only: the loops call it inside numba (see the overloads below)")


def checks(policies, k):
    """True when match seat ``k``'s actions must be checked for legality (compiled code only)."""
    raise TypeError("compiled code only: the loops call it inside numba (see the overloads below)")


def seed_seats(policies, mem, seed, players):
    """Prepare the seats' policy memory for a round from its seed (compiled code only)."""
    raise TypeError("compiled code only: the loops call it inside numba (see the overloads below)")


def _generic(policies) -> bool:
    return policies == POLICIES_TYPE


@overload(call_policy, inline="always")
def _call_policy(policies, k, st, seat, mem):
    if _generic(policies):
        return lambda policies, k, st, seat, mem: policies[k](st, seat, mem)
    if isinstance(policies, PolicySetType):
        if len(policies.entries) == 1:
            return lambda policies, k, st, seat, mem: _call_slot(policies, 0, st, seat, mem)
        return lambda policies, k, st, seat, mem: _call_slot(policies, policies.slots[k], st, seat, mem)
    return None


@overload(checks, inline="always")
def _checks(policies, k):
    if _generic(policies):
        return lambda policies, k: True
    if isinstance(policies, PolicySetType):
        unchecked = [not e.trusted for e in policies.entries]
        if not any(unchecked):
            return lambda policies, k: False
        if all(unchecked):
            return lambda policies, k: True
        mask = np.int64(sum(1 << i for i, u in enumerate(unchecked) if u))
        return lambda policies, k: ((mask >> policies.slots[k]) & 1) != 0
    return None


@overload(seed_seats, inline="always")
def _seed_seats(policies, mem, seed, players):
    if _generic(policies):
        return lambda policies, mem, seed, players: seed_policies(mem, seed, players)
    if isinstance(policies, PolicySetType):
        words = max(e.mem_words for e in policies.entries)
        if words == 0:
            return lambda policies, mem, seed, players: None

        def impl(policies, mem, seed, players):
            for s in range(players):
                mem[s, 0] = derive(seed, SEAT_STREAM + s)
                for i in range(1, words):
                    mem[s, i] = 0
        return impl
    return None


@intrinsic
def _call_slot(typingctx, policies, slot, st, seat, mem):
    """Call the policy in ``slot`` of the set directly: a switch over the slots, each case one
    call (``alwaysinline`` for a trusted policy, so LLVM compiles it into the loop)."""
    want = POLICY_SIG.args
    if not isinstance(policies, PolicySetType) or (st, seat, mem) != tuple(want):
        return None
    sig = types.int64(policies, slot, st, seat, mem)

    def codegen(context, builder, signature, args):
        slot_v, call_args = args[1], args[2:]
        if isinstance(signature.args[1], types.IntegerLiteral):
            slot_v = context.get_constant(types.int64, signature.args[1].literal_value)
        else:
            slot_v = context.cast(builder, slot_v, signature.args[1], types.int64)
        entries = policies.entries
        out = cgutils.alloca_once(builder, ir.IntType(64), name="action")
        end = builder.append_basic_block("policy.done")
        cases = [builder.append_basic_block(f"policy.{i}") for i in range(len(entries))]
        switch = builder.switch(slot_v, cases[-1])
        for i, block in enumerate(cases[:-1]):
            switch.add_case(ir.Constant(slot_v.type, i), block)
        for entry, policy, block in zip(entries, policies.policies(), cases):
            builder.position_at_end(block)
            cres = policy.overloads[want]
            context.add_linking_libs([cres.library])
            fn = context.declare_function(builder.module, cres.fndesc)
            status, action = context.call_conv.call_function(
                builder, fn, types.int64, cres.fndesc.argtypes, call_args,
                attrs=("alwaysinline",) if entry.trusted else None)
            with cgutils.if_unlikely(builder, status.is_error):
                context.call_conv.return_status_propagate(builder, status)
            builder.store(action, out)
            builder.branch(end)
        builder.position_at_end(end)
        return builder.load(out)

    return sig, codegen
