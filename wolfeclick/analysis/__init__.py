"""Battle analysis: who was winning at each decision, what each option was worth, where the battle turned.

It sits beside the battle core (it replays recordings through the runner) and below the views; see docs/analysis.md.
"""
