"""``kc-sim serve``: a table for people. A local web app where a person plays Kings in the
Corner against 1-3 of kc-sim's agents in a browser, and every finished round is kept as a
``kc-sim/game/1`` record (docs/serve.md).

One concern per module:

* :mod:`kc_sim.serve.limits` - the security bounds (body size, open games, idle expiry,
  names) and the headers every answer carries.
* :mod:`kc_sim.serve.session` - one game at the table: a match between the person's seat
  and the agents, the view that seat may see, the agents' turns step by step.
* :mod:`kc_sim.serve.games` - the open games by unguessable id, bounded and expiring.
* :mod:`kc_sim.serve.storage` - appending finished rounds whole to the data folder.
* :mod:`kc_sim.serve.app` - the ASGI app (FastAPI): the JSON API under ``/api`` and the page.
* :mod:`kc_sim.serve.loadtest` - scripted players through the API (``kc-sim bench-serve``).

The heavy libraries (FastAPI, uvicorn, httpx) are the ``serve`` extra; only the command that
serves imports them.
"""
