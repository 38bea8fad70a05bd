"""The match grammar of contract version 2 (spec/v2-extensions.md §2 and §10, points 9-13).

One home for everything that reads or compares JSON values in version-2 rules: paths into values
(`paths`), JSON equality (`equality`) and the canonical form that evidence and sizes use
(`canonical`). Match trees, operators and references build on these. Version-1 kinds never use
this package.
"""
