"""Reading what XLA did: HLO text and dumps parsed, and the evidence a worker records."""
