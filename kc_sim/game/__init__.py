"""The game itself, as data: cards, action ids, rule sets and their variants, and the
readable reference engine (the oracle the compiled core is tested against). Depends on nothing
else in kc-sim."""
