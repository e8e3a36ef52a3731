"""Running one battle end to end and recording it (the recording schema is the contract)."""
