"""The Pokémon Showdown simulator, embedded: Node child processes speaking JSON lines (see PROTOCOL.md)."""
