"""Policies: anything that turns an observation into a decision."""
