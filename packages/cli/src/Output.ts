/**
 * How results are printed: human-readable tables and field lists by default, the API's JSON with `--json`
 * (encoded with the response schema, so dates are ISO strings exactly as on the wire).
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** Whether to colour a stream: see bin.ts for how it is decided. */
export interface Style {
  readonly color: boolean
}

const sgr = (code: string) => (style: Style, text: string) => style.color ? `\u001b[${code}m${text}\u001b[0m` : text
export const bold = sgr("1")
export const red = sgr("1;31")

/** `2025-01-31T12:00:00Z`: ISO 8601 without milliseconds, or `-` for none. */
export const date = (value: Date | null | undefined) =>
  value === null || value === undefined ? "-" : value.toISOString().replace(/\.\d{3}Z$/, "Z")

/** Columns padded to their widest cell, with an upper-case header row. */
export const table = (headers: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((cell, column) => column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)).join("  ").trimEnd()
  return [line(headers.map((header) => header.toUpperCase())), ...rows.map(line)].join("\n")
}

/** `Label  value` lines, labels aligned. */
export const fields = (pairs: ReadonlyArray<readonly [string, string]>) => {
  const width = Math.max(...pairs.map(([label]) => label.length))
  return pairs.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join("\n")
}

export const json = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

/** Prints a result: its wire JSON with `--json`, else the human rendering. */
export const emit = <A, I>(
  options: { readonly json: boolean },
  schema: Schema.Codec<A, I>,
  value: NoInfer<A>,
  human: (value: A) => string
) =>
  options.json
    ? Effect.flatMap(Effect.orDie(Schema.encodeEffect(schema)(value)), json)
    : Console.log(human(value))

/** A note for people, kept off stdout so that piping the result stays clean. */
export const note = (message: string) => Console.error(message)
