"""Match trees: how contract version 2 says what a JSON value must be.

## What a tree is
A rule's `match` (tool_args), a matcher's `args` and, in later kinds, output checks hold a *match
tree*. Each node of it is one of three things:

- a **literal**: an object matches as a *subset* (every key it names must be present and match;
  other keys may be there, unless the rule says `mode: exact`, when the key sets must be equal at
  every level, except the top-level keys in `ignore`); an array needs the same length and matches
  position by position; a string, number, boolean or null must be equal. Equality is JSON's,
  strict about types: `true` is not `1`, `1` is `1.0`, `"100"` is not `100`; numbers compare as
  the doubles JavaScript reads them as (RFC 8785), so integers past 2^53 that round alike are
  equal (`9007199254740993` is `9007199254740992`: an id that long is safe only as a string);
- an **operator object**: only `$` keys, all of which must hold;
- a **reference**: one of `$arg`, `$from_result`, `$from_output`, standing for values found in the
  trace (its *candidates*).

```json
{"order": {"$regex": "^A[0-9]+$"}, "amount": {"$gt": 0, "$lte": 500}, "currency": "EUR"}
```
A key the value lacks is a mismatch (only `{"$exists": false}` accepts an absent key); `null` is a
value like any other.

## Operators
- `$regex` (a string of at most 500 characters): an unanchored search, on strings only (a number
  never matches). RE2 syntax: no backreferences, lookaround, atomic groups, possessive quantifiers,
  conditionals or comments, repetitions up to 1000 (nested ones multiplied), and `\\z` (not `\\Z`)
  for the end of the text; such a pattern is refused when the contract loads. With the `re2` extra
  the search runs on RE2, in linear time on any input, and a pattern RE2 finds too large to compile
  (`\\pL{1000}`: a class of every letter, a thousand times over) is refused too, and so are the
  patterns of a contract that compile to more than 3,000,000 RE2 instructions together (`\\pL{100}`
  takes 119,604, about 3 MB; `\\pL+` 1,201, `^A[0-9]+$` 6): the one that passes the sum is named.
  Without it, it runs on Python's engine with RE2's meanings (ASCII `\\d`, `\\w`, `\\s`, `\\b`;
  Unicode categories and scripts such as `\\pL` and `\\p{Greek}`, from RE2's own tables; `(?U)`;
  `\\Q...\\E`, `\\x{41}`, octal `\\141`, `(?<name>...)`), which can be slow on nested repetition
  (`^(a|aa)*$` on a long text), and departs from RE2 in these corners, each of which can change a
  verdict: under `(?i)` it folds `İ` and `ı` to `i`, and folds a negated item of a class
  (`[\\P{Lu}]`, `[\\W]`, `[[:^upper:]]`) after negating it, where RE2 folds first (so
  `(?i)^[\\P{Lu}]$` finds `A` only here); `\\C` is one character, not one byte; `\\B` never falls
  between the bytes of one character; `[--[:alpha:]]` is read as a POSIX class, and a pattern too
  large for RE2 runs; a quantifier after an empty `\\Q\\E` that follows a quantifier (`a*\\Q\\E*`)
  is refused, though RE2 takes it. Install the extra when traces come from agents you do not
  control, or when verdicts must not depend on the install.
- `$in` (a list of at most 1000 values, or a reference): equal to one of them.
- `$gt`, `$gte`, `$lt`, `$lte` (a finite number, or a reference): a number in range; booleans,
  strings such as `"100"` and a number read as infinity (`1e400`) never compare.
- `$exists` (true or false): whether the key is present; only as the value of a key (also in a
  branch of that value's `$any_of`).
- `$any_of` (2..20 nodes): some branch matches.
- `$contains` (a node): some element of the array matches.
- `$literal` (any value): equal to it as written, `$` keys and all.

## References
A reference yields a set of candidates:

- `{"$arg": "order"}`: the value at that path in the args of the call being checked;
- `{"$from_output": "refund.amount"}`: the value in the run's final output (the `output` of the last
  `run.completed` or `run.failed`); the calls are then judged when the trace ends;
- `{"$from_result": {"tool": "orders.get", "path": "paid", "where": {"id": {"$arg": "order"}}}}`:
  values of earlier results, found in five steps: (1) the results strictly before the checked call
  of calls to `tool` (a glob), leaving out `ok: false` ones unless `ok_only: false`, and result events
  without `result`; (2) with `call_index: k`, only the result of the k-th call of that tool in the
  trace (not with `where` or `where_result`); (3) with `where`, only results whose call's args
  match it (`$arg` inside reads the checked call: a join), with `where_result`, only results that
  match it; (4) the value at `path` (default: the whole result), then `find` (the first element of
  that array matching a node, which holds no reference), `select` (a path inside that element, or
  without `find` inside the value at `path`) and `length: true` (the array's length); (5) every
  value left is a candidate. `$from_result` may nest in `where` at most four deep.

  What is kept: the results of the tools some reference names, and only the paths it reads. What
  it costs: a `where` whose keys equal an `$arg` (a join on an id) looks the results up in an
  index, so each call costs about the same however many results came before; any other `where`
  (a comparison, an `$any_of`, an `$arg` inside an operator) and `where_result` try each earlier
  result of the tool for each call checked: 5,000 calls against 5,000 results take about a minute.

Equality, `$in` and `$contains` pass if any candidate matches (for `$in`, an array candidate gives
its elements). Comparisons need exactly one distinct candidate; more is `ambiguous`. No candidate at
all is `no_candidates`. Either is reported as an unresolved reference (`reference_unresolved`),
never also as a mismatch.

## Paths
`items.0.sku` (a numeric segment indexes an array, and is a key in an object) or a JSON Pointer
starting with `/` (`/a~1b` is the key `a/b`, `/` the key `""`). A path is found only if every step
is; `null` is found.

## Limits
A tree is at most 32 levels deep and 10,000 nodes. A value that passes is tested once; one that
fails is walked again to say why, every element a `$contains` tries and every branch of an `$any_of`
(a few times the cost of the test): a tree of `$contains` inside `$any_of` inside `$contains` costs
most on a failing call (400 such branches against a 44 KB line: about 20 s). Every mistake (an
unknown `$` key, `$` keys mixed with plain keys, a bad operand, a reference where the rule allows
none, `$exists` out of place) is a load error naming its JSON path in the contract, with a "did you
mean" for misspelt operators.

## Code
One home for everything that reads or compares JSON values in version-2 rules: `paths`,
`equality`, `canonical` (RFC 8785, for evidence and sizes), `tree` (compiling trees, and
evaluating them to say what does not match), `quick` (the fast yes), `regex` (RE2 patterns),
`references` (where candidates come from), `schema` (JSON Schema on args). Version-1 kinds
use only `tree`, through a matcher's `args`.
"""
