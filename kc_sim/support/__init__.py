"""Plumbing every layer may use, importing nothing of kc-sim: package exports loaded on first
use and values made once on first use (:mod:`kc_sim.support.lazy`), files written whole or
not at all (:mod:`kc_sim.support.atomic`), a file's size and SHA-256
(:mod:`kc_sim.support.digest`), and the ``kc-sim: ...`` line a command says on stderr while
it goes on (:mod:`kc_sim.support.notice`)."""
