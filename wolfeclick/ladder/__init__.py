"""Playing on a real Pokémon Showdown server (a local one or a community ladder) through poke-env's client."""
