/**
 * Typed statements over our own tables, as `SqlSchema` makes them, whose rows failing their schema is a bug (a defect),
 * not an outcome, and row schemas derived from the API's resource classes, so no row type is written twice.
 *
 * `findOne` here answers an `Option` (as `SqlSchema.findOneOption`) and `single` fails when there is no row (as
 * `SqlSchema.findOne`, a defect here). A resource class built without validating (`classRow`, `trustedClassRow`) is built with
 * `disableChecks`: the class constructor still reads the fields' types (a Date is a Date), only their checks
 * (lengths, patterns) are skipped.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaParser from "effect/SchemaParser"
import * as Statement from "effect/sql/Statement"

/** A timestamp column: the driver reads and writes `Date`s (the API's `Timestamp` is their ISO form). */
export const DateColumn = Schema.Date

/** The `ILIKE` pattern of a containment search, where `%` and `_` match themselves. */
export const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

// Statements over our own tables, as `SqlSchema`'s: a row that fails its schema is a bug (a defect), not an outcome.
interface Options<Req extends Schema.Constraint, Res extends Schema.Constraint, E, R> {
  readonly Request: Req
  readonly Result: Res
  readonly execute: (request: Req["Encoded"]) => Effect.Effect<ReadonlyArray<unknown>, E, R>
}

const defectOnSchemaError = <A, E, R>(effect: Effect.Effect<A, E | Schema.SchemaError, R>): Effect.Effect<A, E, R> =>
  Effect.catch(effect, (error) => Schema.isSchemaError(error) ? Effect.die(error) : Effect.fail(error))

/**
 * Whether the values of `ast` are their own encoding: no transformation anywhere in it (a class, a renamed key, a
 * decoding default, a JSON string all have one). Its checks aside: they are not the statement's to repeat.
 */
export const encodesAsItself = (ast: SchemaAST.AST): boolean => {
  if (ast.encoding !== undefined) return false
  switch (ast._tag) {
    case "Objects":
      return ast.propertySignatures.every((property) => encodesAsItself(property.type)) &&
        ast.indexSignatures.every((index) => encodesAsItself(index.parameter) && encodesAsItself(index.type))
    case "Arrays":
      return ast.elements.every(encodesAsItself) && ast.rest.every(encodesAsItself)
    case "Union":
      return ast.types.every(encodesAsItself)
    case "Declaration":
      return ast.typeParameters.every(encodesAsItself)
    case "Suspend":
      return false
    default:
      return true
  }
}

/**
 * A statement's request as the statement sends it. Most requests (ids, texts, dates, fragments) are their own
 * encoding: they go as they are, typed by their callers and checked at the API's edge, without a pass of
 * `Schema.encodeEffect` on every statement (issue 71: each pass allocated its parser's effects, on every statement
 * of every request). The others are encoded.
 */
const encoder = <Req extends Schema.Constraint>(Request: Req) => {
  const encode = Schema.encodeEffect(Request)
  if (!encodesAsItself(Request.ast)) return encode
  // What `encodesAsItself` found, said to the types: a value of this schema is its encoded value.
  const isEncoded = (_: Req["Type"] | Req["Encoded"]): _ is Req["Encoded"] => true
  return (request: Req["Type"]): Effect.Effect<Req["Encoded"], Schema.SchemaError, Req["EncodingServices"]> =>
    isEncoded(request) ? Effect.succeed(request) : encode(request)
}

export const findAll = <Req extends Schema.Constraint, Res extends Schema.Constraint, E, R>(options: Options<Req, Res, E, R>) => {
  const encode = encoder(options.Request)
  const decode = Schema.decodeUnknownEffect(Schema.mutable(Schema.Array(options.Result)))
  return (
    request: Req["Type"]
  ): Effect.Effect<ReadonlyArray<Res["Type"]>, E, R | Req["EncodingServices"] | Res["DecodingServices"]> =>
    defectOnSchemaError(Effect.flatMap(Effect.flatMap(encode(request), options.execute), decode))
}

/** The first row, if any (as `SqlSchema.findOneOption`; `single` fails when there is none). */
export const findOne = <Req extends Schema.Constraint, Res extends Schema.Constraint, E, R>(options: Options<Req, Res, E, R>) => {
  const encode = encoder(options.Request)
  const decode = Schema.decodeUnknownEffect(options.Result)
  return (
    request: Req["Type"]
  ): Effect.Effect<Option.Option<Res["Type"]>, E, R | Req["EncodingServices"] | Res["DecodingServices"]> =>
    defectOnSchemaError(
      Effect.flatMap(
        Effect.flatMap(encode(request), options.execute),
        (rows) => rows.length > 0 ? Effect.asSome(decode(rows[0])) : Effect.succeedNone
      )
    )
}

/** One row that must exist (say, a row this transaction just wrote or locked). */
export const single = <Req extends Schema.Constraint, Res extends Schema.Constraint, E, R>(options: Options<Req, Res, E, R>) => {
  const encode = encoder(options.Request)
  const decode = Schema.decodeUnknownEffect(options.Result)
  return (
    request: Req["Type"]
  ): Effect.Effect<Res["Type"], E, R | Req["EncodingServices"] | Res["DecodingServices"]> =>
    defectOnSchemaError(
      Effect.flatMap(
        Effect.flatMap(encode(request), options.execute),
        (rows) => rows.length > 0 ? decode(rows[0]) : Effect.die(new Cause.NoSuchElementError())
      )
    )
}

export const execute = <Req extends Schema.Constraint, E, R>(options: {
  readonly Request: Req
  readonly execute: (request: Req["Encoded"]) => Effect.Effect<unknown, E, R>
}) => {
  const encode = encoder(options.Request)
  return (request: Req["Type"]): Effect.Effect<void, E, R | Req["EncodingServices"]> =>
    defectOnSchemaError(Effect.asVoid(Effect.flatMap(encode(request), options.execute)))
}

/** A resource class of the API (`Schema.Class`): its fields, and its constructor. */
export interface ResourceClass<Self extends object, Fields extends Schema.Struct.Fields> extends Schema.Top {
  readonly Type: Self
  readonly fields: Fields
  new(props: Schema.Struct.Type<Fields>, options?: Schema.MakeOptions): Self
}

/** What `classRow` and `trustedClassRow` give: a row of the database read as the resource. */
export type Row<A> = Schema.Decoder<A>

/**
 * How a resource's columns are read. `json`: columns selected as text (`c.config_json::text AS config_json`) and
 * parsed here, because the SQL client's result-name transform would camel-case the members of a parsed object (a
 * config's `auto_import` would come back as `autoImport`); a SQL NULL stays null.
 */
export interface RowOptions<A> {
  readonly json?: ReadonlyArray<keyof A & string>
}

/** A JSON text column of `field`'s type; a SQL NULL is read by `field` itself (so only a nullable field takes one). */
const jsonColumn = (field: Schema.Decoder<unknown>) => Schema.Union([Schema.fromJsonString(field), field])

/** The resource made of fields already read: without checking them again (see the module comment). */
const construct = <Self extends object, Fields extends Schema.Struct.Fields>(resource: ResourceClass<Self, Fields>, fields: unknown): Self =>
  new resource(fields as Schema.Struct.Type<Fields>, { disableChecks: true })

const instanceOf = <Self extends object, Fields extends Schema.Struct.Fields>(resource: ResourceClass<Self, Fields>) =>
  Schema.declare((value: unknown): value is Self => value instanceof resource)

/**
 * A resource class read from a row: the row's columns are the type side of the class's fields (a `Date` where the
 * wire has an ISO string), validated as they are decoded, then made the class without validating them again.
 */
export const classRow = <Self extends object, Fields extends Schema.Struct.Fields>(
  resource: ResourceClass<Self, Fields>,
  options: RowOptions<Self> = {}
): Row<Self> => {
  const json = new Set<string>(options.json ?? [])
  const columns: Record<string, Schema.Decoder<unknown>> = {}
  for (const [name, field] of Object.entries(resource.fields)) {
    // The type side keeps an optional member (absent in some views of the resource, never in a row) optional.
    const type = Schema.toType(field)
    columns[name] = json.has(name) ? jsonColumn(type) : type
  }
  return Schema.Struct(columns).pipe(Schema.decodeTo(instanceOf(resource), {
    decode: SchemaGetter.transform((row) => construct(resource, row)),
    encode: SchemaGetter.transform((value) => Object.fromEntries<unknown>(Object.entries(value)))
  }))
}

/**
 * The same without validating: for lists of many rows of our own tables, where the benchmark showed validation
 * costing half the throughput (members list, 144 → 308 req/s on Postgres). The response schema still checks every
 * item on the way out, so a bad row is still a 500, not a wrong answer.
 */
export const trustedClassRow = <Self extends object, Fields extends Schema.Struct.Fields>(
  resource: ResourceClass<Self, Fields>,
  options: RowOptions<Self> = {}
): Row<Self> => {
  const json = options.json ?? []
  const parse = (row: unknown): unknown => {
    if (json.length === 0 || typeof row !== "object" || row === null) return row
    const parsed: Record<string, unknown> = { ...row }
    for (const name of json) {
      const text = parsed[name]
      if (typeof text === "string") parsed[name] = JSON.parse(text)
    }
    return parsed
  }
  return Schema.Unknown.pipe(Schema.decodeTo(instanceOf(resource), {
    decode: SchemaGetter.transform((row) => construct(resource, parse(row))),
    encode: SchemaGetter.transform((value): unknown => value)
  }))
}

/**
 * A row with columns beside the resource's (`SELECT ${expression} AS access_rank, <the resource's columns>`): the
 * row read by its own schema, the other columns by theirs, as `{ row, ...columns }`.
 */
export const withColumns = <A, F extends { readonly [name: string]: Schema.Decoder<unknown> }>(
  row: Row<A>,
  columns: F
): Row<{ readonly row: A } & Schema.Struct.Type<F>> => {
  const decodeRow = SchemaParser.decodeUnknownEffect(row)
  const decodeOthers = SchemaParser.decodeUnknownEffect(Schema.Struct(columns))
  return Schema.Unknown.pipe(Schema.decodeTo(trusted<{ readonly row: A } & Schema.Struct.Type<F>>(), {
    decode: SchemaGetter.transformEffect((input: unknown) =>
      Effect.zipWith(decodeRow(input), decodeOthers(input), (row, others) => ({ ...others, row }))
    ),
    encode: SchemaGetter.transform((value): unknown => value)
  }))
}

/** A SQL fragment as a member of a statement's request schema (a condition or an expression a service built). */
export const Fragment = Schema.declare(Statement.isFragment)

/**
 * Values taken as their type says, without validating: plain rows of our own tables read in very large numbers (a
 * repository tree of 100,000 entries: the statement casts its columns to what `A` says, `size::float8`), for the
 * reason `trustedClassRow` gives, or a batch of rows a request passes through as it is.
 */
export const trusted = <A>(): Schema.declare<A> => Schema.declare((_: unknown): _ is A => true)

/**
 * A cleanup job's delete, batch after batch: runs `statement(batch)` (which answers how many rows it deleted) until
 * a batch is not full or `batches` statements ran, so no statement holds many locks or a long transaction. How many.
 */
export const deleteInBatches = Effect.fn("Statements.deleteInBatches")(function*<E, R>(
  statement: (limit: number) => Effect.Effect<number, E, R>,
  options: { readonly batch: number; readonly batches?: number | undefined }
) {
  let deleted = 0
  for (let run = 0; run < (options.batches ?? Infinity); run++) {
    const rows = yield* statement(options.batch)
    deleted += rows
    if (rows < options.batch) break
  }
  return deleted
})
