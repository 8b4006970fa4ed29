/** Plugin manifests: reading them from a tree, at most so many at once, and what makes one unusable. */
import { type JsonObject, MAX_SOURCE_BYTES } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type ParseError, parse } from "jsonc-parser"
import { exceedsDepth, maxDepth, nulPaths } from "../platform/RequestGuard.js"
import type { TreeIndex } from "./RepositoryTree.js"

/** Where manifests come from, and how many are read. */
export interface ManifestReader<E, R> {
  /** A file's text, or null when it is gone. Only manifests are read. */
  readonly readText: (path: string) => Effect.Effect<string | null, E, R>
  /** Most plugin manifests read in one discovery (default 200, as many as one apply may select). */
  readonly maxManifests?: number
  /** Manifests read at once (default 8). */
  readonly concurrency?: number
}

export type Manifest =
  | { readonly _tag: "Read"; readonly path: string; readonly value: JsonObject }
  | { readonly _tag: "Unusable"; readonly path: string; readonly problem: string }

/** Error messages quote at most 100 characters of what they got. */
export const clamp = (text: string, max = 100) => (text.length > max ? `${text.slice(0, max)}…` : text)

/**
 * A JSON object as manifests hold them: any members, each left unknown for the schema of its field (a JSON array is
 * not one, though a record's schema would take it).
 */
export const ManifestObject = Schema.Record(Schema.String, Schema.Unknown).check(
  Schema.makeFilter((value) => !Array.isArray(value) || "an object, not a list")
)
export const isObject = Schema.is(ManifestObject)

/** A text member as Claude Code uses one: a string with something besides white space, trimmed. */
export const NonBlank = Schema.Trim.check(Schema.isNonEmpty())

/**
 * A member decoded leniently, as Claude Code reads manifests: its value when `schema` decodes it, else null (a
 * missing member and one of the wrong type alike; callers that warn about a wrong type say so themselves).
 */
export const member = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, value: unknown): S["Type"] | null =>
  Option.getOrNull(Schema.decodeUnknownOption(schema)(value))

const LONE_SURROGATE = /[\uD800-\uDFFF]/u

/** Whether any string or key holds a lone surrogate: Postgres refuses it in JSON, and metadata may be stored. */
const hasLoneSurrogate = (value: unknown): boolean => {
  const stack: Array<unknown> = [value]
  while (stack.length > 0) {
    const current = stack.pop()
    if (typeof current === "string") {
      if (LONE_SURROGATE.test(current)) return true
    } else if (typeof current === "object" && current !== null) {
      for (const [key, member] of Object.entries(current)) {
        if (LONE_SURROGATE.test(key)) return true
        stack.push(member)
      }
    }
  }
  return false
}

/**
 * Where JSON text stops being valid, as `line L, column C: ` (1-based), read with jsonc-parser in strict mode (no
 * comments, no trailing commas, as `JSON.parse` and Claude Code read manifests); empty when it finds no error.
 */
export const whereInvalid = (text: string): string => {
  const errors: Array<ParseError> = []
  parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false })
  const first = errors[0]
  if (first === undefined) return ""
  const before = text.slice(0, first.offset)
  const line = before.split("\n").length
  const column = first.offset - before.lastIndexOf("\n")
  return `line ${line}, column ${column}: `
}

/**
 * A manifest's JSON object, or why it cannot be used. Metadata goes into responses and may be stored, so what
 * storage or the response encoder would refuse (NUL, lone surrogates, deep nesting) makes it unusable here.
 */
const parseManifest = (path: string, text: string | null): Manifest => {
  const unusable = (problem: string): Manifest => ({ _tag: "Unusable", path, problem: `\`${path}\` ${problem}` })
  if (text === null) return unusable("could not be read from the repository")
  if (exceedsDepth(text, maxDepth)) return unusable(`nests more than ${maxDepth} levels deep`)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return unusable(`is not valid JSON (${whereInvalid(text)}${clamp((error instanceof Error ? error.message : String(error)).replace(/\s+/g, " "))})`)
  }
  if (!Schema.is(ManifestObject)(value)) return unusable("is not a JSON object")
  if (nulPaths(value).length > 0 || hasLoneSurrogate(value)) {
    return unusable("contains the NUL character or a lone UTF-16 surrogate")
  }
  return { _tag: "Read", path, value }
}

export interface ManifestReads {
  readonly manifests: ReadonlyMap<string, Manifest>
  /** Whether `maxManifests` left some unread, as a warning for the discovery. */
  readonly warnings: ReadonlyArray<string>
}

/** At least one: the marketplace manifest alone must be readable. */
const maxManifestsOf = (input: { readonly maxManifests?: number | undefined }) => Math.max(1, input.maxManifests ?? 200)

export const readManifests = <E, R>(
  input: ManifestReader<E, R>,
  index: TreeIndex,
  paths: ReadonlyArray<string>
): Effect.Effect<ManifestReads, E, R> => {
  const max = maxManifestsOf(input)
  const unique = [...new Set(paths)]
  const read = unique.slice(0, max)
  return Effect.forEach(read, (path) => {
    // The tree gives sizes: a manifest larger than a config object's source may be is refused unread.
    const size = index.blobs.get(path)?.size ?? 0
    if (size > MAX_SOURCE_BYTES) {
      return Effect.succeed<Manifest>({ _tag: "Unusable", path, problem: `\`${path}\` is larger than 1 MiB` })
    }
    return Effect.map(input.readText(path), (text) => parseManifest(path, text))
  }, { concurrency: input.concurrency ?? 8 }).pipe(
    Effect.map((results) => {
      const skipped = unique.slice(max)
      return {
        manifests: new Map(results.map((manifest) => [manifest.path, manifest])),
        warnings: skipped.length === 0 ? [] : [
          `The repository has more plugin manifests than orgplane reads at once (${max}); ${skipped.length} were not read, from \`${clamp(skipped[0]!)}\` on.`
        ]
      }
    })
  )
}

/** A string member, trimmed; null when it is missing, not a string or blank. */
export const nonBlank = (value: unknown): string | null => member(NonBlank, value)
