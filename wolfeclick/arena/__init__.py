"""Tournaments, statistics, ratings and charts."""
