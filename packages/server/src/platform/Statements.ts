/**
 * Typed statements over our own tables: `SqlSchema` statements whose rows failing their schema is a bug (a defect),
 * not an outcome, and row schemas derived from the API's resource classes, so no row type is written twice.
 */
import { SqlSchema } from "@effect/sql"
import { type Cause, Effect, type Option, type ParseResult, Schema } from "effect"

/** A timestamp column: the driver reads and writes `Date`s (the API's `Timestamp` is their ISO form). */
export const DateColumn = Schema.DateFromSelf

// `SqlSchema` statements over our own tables: a row that fails its schema is a bug (a defect), not an outcome.
type Options<IA, II, IR, A, AI, AR, E, R> = {
  readonly Request: Schema.Schema<IA, II, IR>
  readonly Result: Schema.Schema<A, AI, AR>
  readonly execute: (request: II) => Effect.Effect<ReadonlyArray<unknown>, E, R>
}

const defectOnParseError = <A, E, R>(effect: Effect.Effect<A, E | ParseResult.ParseError, R>): Effect.Effect<A, E, R> =>
  Effect.catchIf(effect, (error): error is ParseResult.ParseError => (error as any)?._tag === "ParseError", Effect.die) as Effect.Effect<A, E, R>

export const findAll = <IA, II, IR, A, AI, AR, E, R>(options: Options<IA, II, IR, A, AI, AR, E, R>) => {
  const run = SqlSchema.findAll(options)
  return (request: IA): Effect.Effect<ReadonlyArray<A>, E, R | IR | AR> => defectOnParseError(run(request))
}

export const findOne = <IA, II, IR, A, AI, AR, E, R>(options: Options<IA, II, IR, A, AI, AR, E, R>) => {
  const run = SqlSchema.findOne(options)
  return (request: IA): Effect.Effect<Option.Option<A>, E, R | IR | AR> => defectOnParseError(run(request))
}

/** One row that must exist (say, a row this transaction just wrote or locked). */
export const single = <IA, II, IR, A, AI, AR, E, R>(options: Options<IA, II, IR, A, AI, AR, E, R>) => {
  const run = SqlSchema.single(options)
  return (request: IA): Effect.Effect<A, E, R | IR | AR> =>
    defectOnParseError(Effect.catchIf(run(request), (error): error is Cause.NoSuchElementException => (error as any)?._tag === "NoSuchElementException", Effect.die))
}

export const execute = <IA, II, IR, E, R>(options: {
  readonly Request: Schema.Schema<IA, II, IR>
  readonly execute: (request: II) => Effect.Effect<unknown, E, R>
}) => {
  const run = SqlSchema.void(options)
  return (request: IA): Effect.Effect<void, E, R | IR> => defectOnParseError(run(request))
}

type ResourceClass<A> = Schema.Schema<A, any, never> & {
  readonly fields: Schema.Struct.Fields
  new(props: any, options?: boolean): A
}

/**
 * A resource class read from a row: the row's columns are the type side of the class's fields (a `Date` where the
 * wire has an ISO string), validated as they are decoded, then made the class without validating them again.
 */
export const classRow = <A>(resource: ResourceClass<A>): Schema.Schema<A, unknown> => {
  const fields = Object.fromEntries(Object.entries(resource.fields).map(([name, field]) => [name, Schema.typeSchema(field as Schema.Schema.Any)]))
  return Schema.transform(Schema.Struct(fields), Schema.declare((value): value is A => value instanceof resource), {
    strict: false,
    decode: (row) => new resource(row, true),
    encode: (value) => value
  }) as unknown as Schema.Schema<A, unknown>
}

/**
 * The same without validating: for lists of many rows of our own tables, where the benchmark showed validation
 * costing half the throughput (members list, 144 → 308 req/s on Postgres). The response schema still checks every
 * item on the way out, so a bad row is still a 500, not a wrong answer.
 */
export const trustedClassRow = <A>(resource: ResourceClass<A>): Schema.Schema<A, unknown> =>
  Schema.declare((_: unknown): _ is unknown => true).pipe(
    Schema.transform(Schema.declare((value): value is A => value instanceof resource), {
      strict: false,
      decode: (row) => new resource(row, true),
      encode: (value) => value
    })
  ) as unknown as Schema.Schema<A, unknown>
