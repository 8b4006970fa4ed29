/**
 * Typed statements over our own tables: `SqlSchema` statements whose rows failing their schema is a bug (a defect),
 * not an outcome, and row schemas derived from the API's resource classes, so no row type is written twice.
 */
import { SqlSchema, Statement } from "@effect/sql"
import { type Cause, Effect, type Option, ParseResult, Schema, SchemaAST } from "effect"

/** A timestamp column: the driver reads and writes `Date`s (the API's `Timestamp` is their ISO form). */
export const DateColumn = Schema.DateFromSelf

/** The `ILIKE` pattern of a containment search, where `%` and `_` match themselves. */
export const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

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
 * How a resource's columns are read. `json`: columns selected as text (`c.config_json::text AS config_json`) and
 * parsed here, because the SQL client's result-name transform would camel-case the members of a parsed object (a
 * config's `auto_import` would come back as `autoImport`); a SQL NULL stays null.
 */
export interface RowOptions<A> {
  readonly json?: ReadonlyArray<keyof A & string>
}

/** A JSON text column of `field`'s type; a SQL NULL is read by `field` itself (so only a nullable field takes one). */
const jsonColumn = (field: Schema.Schema.Any) => Schema.Union(Schema.parseJson(field), field)

/**
 * A resource class read from a row: the row's columns are the type side of the class's fields (a `Date` where the
 * wire has an ISO string), validated as they are decoded, then made the class without validating them again.
 */
export const classRow = <A>(resource: ResourceClass<A>, options: RowOptions<A> = {}): Schema.Schema<A, unknown> => {
  const json = new Set<string>(options.json ?? [])
  const fields = Object.fromEntries(Object.entries(resource.fields).map(([name, field]) => {
    // An optional member (absent in some views of the resource, never in a row): its type, still optional.
    if (Schema.isPropertySignature(field) && field.ast._tag === "PropertySignatureDeclaration") {
      const type = Schema.make(SchemaAST.typeAST(field.ast.type))
      return [name, field.ast.isOptional ? Schema.optionalWith(type, { exact: true }) : type]
    }
    const type = Schema.typeSchema(field as Schema.Schema.Any)
    return [name, json.has(name) ? jsonColumn(type) : type]
  }))
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
export const trustedClassRow = <A>(resource: ResourceClass<A>, options: RowOptions<A> = {}): Schema.Schema<A, unknown> => {
  const json = options.json ?? []
  const parse = (row: any) => {
    if (json.length === 0) return row
    const parsed = { ...row }
    for (const name of json) if (typeof parsed[name] === "string") parsed[name] = JSON.parse(parsed[name])
    return parsed
  }
  return Schema.declare((_: unknown): _ is unknown => true).pipe(
    Schema.transform(Schema.declare((value): value is A => value instanceof resource), {
      strict: false,
      decode: (row) => new resource(parse(row), true),
      encode: (value) => value
    })
  ) as unknown as Schema.Schema<A, unknown>
}

/**
 * A row with columns beside the resource's (`SELECT ${expression} AS access_rank, <the resource's columns>`): the
 * row read by its own schema, the other columns by theirs, as `{ row, ...columns }`.
 */
export const withColumns = <A, F extends { readonly [name: string]: Schema.Schema<any, any, never> }>(
  row: Schema.Schema<A, unknown>,
  columns: F
): Schema.Schema<{ readonly row: A } & Schema.Struct.Type<F>, unknown> => {
  const others = Schema.Struct(columns) as unknown as Schema.Schema<Schema.Struct.Type<F>, unknown>
  return Schema.transformOrFail(
    Schema.Unknown,
    Schema.declare((_: unknown): _ is { readonly row: A } & Schema.Struct.Type<F> => true),
    {
      strict: true,
      decode: (input) =>
        Effect.zipWith(ParseResult.decodeUnknown(row)(input), ParseResult.decodeUnknown(others)(input), (row, columns) => ({ ...(columns as object), row }) as { readonly row: A } & Schema.Struct.Type<F>),
      encode: (value) => ParseResult.succeed(value)
    }
  )
}

/** A SQL fragment as a member of a statement's request schema (a condition or an expression a service built). */
export const Fragment = Schema.declare(Statement.isFragment)

/**
 * Values taken as their type says, without validating: plain rows of our own tables read in very large numbers (a
 * repository tree of 100,000 entries: the statement casts its columns to what `A` says, `size::float8`), for the
 * reason `trustedClassRow` gives, or a batch of rows a request passes through as it is.
 */
export const trusted = <A>(): Schema.Schema<A> => Schema.declare((_: unknown): _ is A => true)

/**
 * A cleanup job's delete, batch after batch: runs `statement(batch)` (which answers how many rows it deleted) until
 * a batch is not full or `batches` statements ran, so no statement holds many locks or a long transaction. How many.
 */
export const deleteInBatches = <E, R>(
  statement: (limit: number) => Effect.Effect<number, E, R>,
  options: { readonly batch: number; readonly batches?: number | undefined }
) =>
  Effect.gen(function*() {
    let deleted = 0
    for (let run = 0; run < (options.batches ?? Infinity); run++) {
      const rows = yield* statement(options.batch)
      deleted += rows
      if (rows < options.batch) break
    }
    return deleted
  })
