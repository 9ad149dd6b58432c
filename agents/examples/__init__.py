"""Complete, runnable example agents: copy one to start your own."""
