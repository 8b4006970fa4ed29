/**
 * The baselines' rows (pg's answers): each column read by the type its statement gives it, failing loudly on another,
 * in place of an untyped row. Imports no orgplane code.
 */

/** A row as pg returns it: its columns by name. */
export type Row = Readonly<Record<string, unknown>>

/** A text column. */
export const text = (value: unknown): string => {
  if (typeof value !== "string") throw new TypeError(`expected a text column, got ${value === null ? "null" : typeof value}`)
  return value
}

/** A text column that may be NULL. */
export const textOrNull = (value: unknown): string | null => (value === null ? null : text(value))

/** A timestamp column (pg reads `timestamptz` as a Date). */
export const date = (value: unknown): Date => {
  if (!(value instanceof Date)) throw new TypeError(`expected a timestamp column, got ${value === null ? "null" : typeof value}`)
  return value
}

/** A `jsonb` column holding an object. */
export const object = (value: unknown): Readonly<Record<string, unknown>> => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new TypeError("expected a JSON object column")
  return Object.fromEntries(Object.entries(value))
}
