#!/usr/bin/env python3
"""A first draft of an Effect 4 *Api.ts from its Effect 3 original (issue 46): rewrites each endpoint's chain
(`.setPayload/.setPath/.setUrlParams/.setHeaders/.addSuccess/.addError` and the `.pipe(audits/requires/...)` around
them) into the options object, `del` into `delete`, the imports into `effect/http-api/*`. Review the output:
anything it did not recognise stays as it was and will not type-check.
usage: port-api.py packages/schema/src/TeamsApi.ts > next/schema/src/TeamsApi.ts"""
import re, sys

src = open(sys.argv[1]).read()

def balanced(s, i):
    """s[i] == '(' -> index of matching ')'"""
    depth = 0; j = i; instr = None
    while j < len(s):
        c = s[j]
        if instr:
            if c == '\\': j += 2; continue
            if c == instr: instr = None
        elif c in '"\'`': instr = c
        elif c == '(': depth += 1
        elif c == ')':
            depth -= 1
            if depth == 0: return j
        j += 1
    raise ValueError("unbalanced")

def split_args(s):
    out = []; depth = 0; cur = ''; instr = None; i = 0
    while i < len(s):
        c = s[i]
        if instr:
            cur += c
            if c == '\\': cur += s[i+1]; i += 2; continue
            if c == instr: instr = None
        elif c in '"\'`': instr = c; cur += c
        elif c in '([{': depth += 1; cur += c
        elif c in ')]}': depth -= 1; cur += c
        elif c == ',' and depth == 0: out.append(cur.strip()); cur = ''
        else: cur += c
        i += 1
    if cur.strip(): out.append(cur.strip())
    return out

def status_of(opts):
    m = re.match(r'\{\s*status:\s*(\d+)\s*\}', opts)
    return m.group(1) if m else None

out = ''; i = 0; used_status = False
pat = re.compile(r'HttpApiEndpoint\.(get|post|put|patch|del|head|options)\(')
while True:
    m = pat.search(src, i)
    if not m:
        out += src[i:]; break
    out += src[i:m.start()]
    close = balanced(src, m.end() - 1)
    method = 'delete' if m.group(1) == 'del' else m.group(1)
    head_args = src[m.end():close]
    j = close + 1
    options = {}; errors = []; successes = []; pipes = []
    while True:
        k = j
        while k < len(src) and src[k] in ' \n\t': k += 1
        mm = re.match(r'\.(setPayload|setPath|setUrlParams|setHeaders|addSuccess|addError|pipe)\(', src[k:])
        if not mm: break
        p = k + mm.end() - 1; q = balanced(src, p)
        args = split_args(src[p+1:q])
        name = mm.group(1)
        if name == 'pipe':
            if not all(re.match(r'(audits|requires|notAudited|addExtension)\(', a) for a in args): break
            pipes += args
        elif name in ('setPayload', 'setPath', 'setUrlParams', 'setHeaders'):
            options[{'setPayload': 'payload', 'setPath': 'params', 'setUrlParams': 'query', 'setHeaders': 'headers'}[name]] = args[0]
        else:
            schema = args[0]
            st = status_of(args[1]) if len(args) > 1 else None
            if len(args) > 1 and st is None: break
            if name == 'addSuccess' and schema == 'Schema.Void' and st == '204': schema = 'HttpApiSchema.NoContent'
            elif st is not None: schema = f'{schema}.pipe(HttpApiSchema.status({st}))'; used_status = True
            (successes if name == 'addSuccess' else errors).append(schema)
        j = q + 1
    if successes: options['success'] = successes[0] if len(successes) == 1 else '[' + ', '.join(successes) + ']'
    if errors: options['error'] = '[' + ', '.join(errors) + ']'
    order = ['params', 'query', 'headers', 'payload', 'success', 'error']
    body = ', '.join(f'{k}: {options[k]}' for k in order if k in options)
    call = f'HttpApiEndpoint.{method}({head_args}' + (f', {{ {body} }}' if body else '') + ')'
    if pipes: call += f'.pipe({", ".join(pipes)})'
    out += call
    i = j
if 'HttpApiSchema.NoContent' in out or used_status:
    if 'HttpApiSchema' not in src.split('export')[0]:
        out = out.replace('import * as HttpApiGroup from "@effect/platform/HttpApiGroup"', 'import * as HttpApiGroup from "@effect/platform/HttpApiGroup"\nimport * as HttpApiSchema from "@effect/platform/HttpApiSchema"', 1)
out = re.sub(r'"@effect/platform/(HttpApi\w*|OpenApi)"', r'"effect/http-api/\1"', out)
out = out.replace('import * as Schema from "effect/Schema"', 'import * as Schema from "effect/Schema"')
sys.stdout.write(out)
