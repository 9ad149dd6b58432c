"""Plumbing every layer may use, importing nothing of kc-sim: package exports loaded on first
use and values made once on first use (:mod:`kc_sim.support.lazy`), and files written whole
or not at all (:mod:`kc_sim.support.atomic`)."""
