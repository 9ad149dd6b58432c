"""Agents driven seat by seat from Python: the one seat driver every caller uses
(:mod:`kc_sim.play.driver.seat`), the Python round loop (:mod:`kc_sim.play.driver.python_loop`),
a match dealt from Python as the compiled loop deals it (:mod:`kc_sim.play.driver.match`), and
an agent's faults, each one line with its round's game record saved
(:mod:`kc_sim.play.driver.faults`). The runner (:mod:`kc_sim.play.driver.runner`) plays rounds and
matches in the compiled loop or through this driver."""
