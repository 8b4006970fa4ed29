#!/usr/bin/env python3
"""
Rewrites next/schema's differential tests to take the Effect 3 side from recorded handles (test/effect3.ts) instead of
importing packages/schema and effect-3: `import * as X3 from "../../../packages/schema/src/X.js"` becomes
`const X3 = effect3("X")`, `import { A as A3 } from ".../X.js"` `const A3 = effect3("X").A`, `import { Schema as
Schema3 } from "effect-3"` `const Schema3 = effect3("effect/Schema")`, and groupDocument comes from
./apiDifferential.js. Type-only imports of effect-3 are dropped and listed: their uses are rewritten by hand.
Usage: python3 next/scripts/effect3-handles.py next/schema/test/*.test.ts
"""
import re
import sys

SRC = "../../../packages/schema/src/"
IMPORT = re.compile(r'^import (type )?([^;]*?) from "([^"]+)"\n', re.M)

def specifiers(text):
    text = text.strip()
    assert text.startswith("{") and text.endswith("}"), text
    for spec in text[1:-1].split(","):
        spec = " ".join(spec.split())
        if spec:
            yield spec

for path in sys.argv[1:]:
    source = open(path).read()
    consts, notes = [], []
    out, last = [], 0
    for match in IMPORT.finditer(source):
        type_only, clause, module = match.group(1), match.group(2), match.group(3)
        replacement = match.group(0)
        if module.startswith(SRC) or module == "effect-3":
            name = module[len(SRC):-len(".js")] if module.startswith(SRC) else None
            if type_only:
                notes.append(f"{path}: dropped `{match.group(0).strip()}`")
                replacement = ""
            elif clause.startswith("* as "):
                assert name is not None, match.group(0)
                consts.append(f'const {clause[5:].strip()} = effect3("{name}")')
                replacement = ""
            else:
                for spec in specifiers(clause):
                    if spec.startswith("type "):
                        notes.append(f"{path}: dropped type {spec}")
                        continue
                    member, _, alias = spec.partition(" as ")
                    alias = alias or member
                    consts.append(f'const {alias} = effect3("{name}").{member}' if name is not None else f'const {alias} = effect3("effect/{member}")')
                replacement = ""
        elif module == "../../../packages/schema/test/support/groupDocument.js":
            replacement = match.group(0).replace(module, "./apiDifferential.js")
        out.append(source[last:match.start()])
        out.append(replacement)
        last = match.end()
    out.append(source[last:])
    text = "".join(out)
    if not consts:
        if text != source:
            open(path, "w").write(text)
        for note in notes:
            print(note)
        continue
    imports = list(IMPORT.finditer(text))
    end = imports[-1].end()
    text = text[:end] + 'import { effect3 } from "./effect3.js"\n\n' + "\n".join(consts) + "\n" + text[end:]
    open(path, "w").write(text)
    for note in notes:
        print(note)
