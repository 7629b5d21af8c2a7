"""The resident process: verbs, protocol envelopes, facts store, transports."""
