"""Makes the repository root importable in tests, so `import lib` and `import labs` work."""
