"""Generators of real framework exports, run by the importer tests."""
