"""WolfeClick Arena: watch, replay and compare Pokémon Showdown agents.

Layers, lowest first (a layer imports only layers before it):
sim → game → policies → llm → battle → arena → ui.
"""

__version__ = "0.1.0"
