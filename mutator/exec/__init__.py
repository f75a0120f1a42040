"""The executors: where programs run (the local warm pool, Ray actors), their worker, protocol, wire format and sandbox."""
