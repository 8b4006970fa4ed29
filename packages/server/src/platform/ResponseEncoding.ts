/**
 * How a handler's answer is encoded. A handler answers with values the server made itself: class instances built from
 * rows of its own tables, checked as they were read or written. The platform would encode every answer by
 * interpreting its success schema, validating the whole value again on the way out (every id's pattern, every date,
 * every literal) before it transforms it: for a page of 50 members, 255 µs of CPU where the JSON text takes 19.
 *
 * `answering` compiles an endpoint's success schema once, on its first answer (SchemaJson.ts), and answers the
 * handler's value with the JSON text it encodes to, status and content type as the builder sets them, so the builder
 * sends it without encoding again. It takes the endpoints whose success is one JSON body (no headers of its own, no
 * stream, not empty); others, and a value the compiled encoder cannot encode, go to the builder's own encoding.
 *
 * That encoding runs without the checks too: the Schema parse option `disableChecks` skips the refinements and still
 * runs every transformation (a `Date` to its ISO string, a class to its fields, a struct to its declared keys), so the
 * JSON is the schema's own for any value of the schema's type. `encodingSuccess` gives an endpoint its success's parse
 * options (`SuccessParseOptions`, over those the API, its group or itself declare) with `disableChecks`;
 * `HttpErrors.group` applies both to every endpoint of the server.
 *
 * What is not checked: a handler's value that has the schema's shape but breaks one of its refinements (an id of the
 * wrong pattern, a negative count where the schema says positive) is sent as it is, where a checked encoding would
 * answer 500. A value of another shape (a bug the transformations meet) is still the platform's 500. With
 * `ORGPLANE_CHECK_RESPONSE_ENCODING=1` (set by the test suites, read as the server builds its groups) every answer
 * is checked by its schema, so a value its schema refuses is answered 500, and every compiled answer is compared with
 * Schema's own encoding: the whole suite checks the handlers and the compiler.
 */
import * as Context from "effect/Context"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as SchemaJson from "./SchemaJson.js"

/** Whether every answer is checked by its schema, as without this module (the test suites set it). */
export const checkingEverything = () => process.env["ORGPLANE_CHECK_RESPONSE_ENCODING"] === "1"

/**
 * The endpoint encoding its success without the schema's checks (see the module comment), unless `checked`; the
 * other parse options of its success as the API, its group or itself declare them (as the builder reads them: the
 * slot's options, else `ParseOptions`).
 */
export const encodingSuccess = (
  api: Pick<HttpApi.Top, "annotations">,
  group: HttpApiGroup.Top,
  endpoint: HttpApiEndpoint.Top,
  checked = checkingEverything()
) => {
  if (checked) return endpoint
  const annotations = Context.merge(Context.merge(api.annotations, group.annotations), endpoint.annotations)
  const declared: SchemaAST.ParseOptions | undefined = Context.getOrUndefined(annotations, HttpApi.SuccessParseOptions) ??
    Context.getOrUndefined(annotations, HttpApi.ParseOptions)
  return endpoint.annotate(HttpApi.SuccessParseOptions, { ...declared, disableChecks: true })
}

/**
 * How the builder sends a success schema's body (Effect 4.1's `HttpApiSchema` keeps both as annotations of the schema,
 * read there by internal functions): its status, `httpApiStatus` on its last check that has one, on the schema, or on
 * its key (`HttpApiSchema.status`), else 200; and its encoding, `~httpApiEncoding`, JSON when absent. `undefined` when
 * the body is not plain JSON (text, bytes, a form, a stream, an upgrade) or the annotation is not in the shape Effect
 * 4.1 gives it: such an endpoint keeps the builder's encoding. The OpenAPI conformance checks of the test suites hold every answer's status and
 * content type to the document's.
 */
const jsonBodyOf = (schema: Schema.Top): { readonly status: number; readonly contentType: string } | undefined => {
  if (Predicate.hasProperty(schema, "~effect/http-api/HttpApiSchema/Stream") || Predicate.hasProperty(schema, "~effect/http-api/HttpApiSchema/Upgrade")) {
    return undefined
  }
  if (HttpApiSchema.isWithHeaders(schema) || HttpApiSchema.isNoContent(schema.ast)) return undefined
  if (SchemaAST.resolveAt<unknown>("~httpApiWithHeaders")(schema.ast) !== undefined) return undefined
  const encoding = SchemaAST.resolveAt<unknown>("~httpApiEncoding")(schema.ast)
  let contentType = "application/json"
  if (encoding !== undefined) {
    if (!Predicate.hasProperty(encoding, "_tag") || encoding._tag !== "Json" || !Predicate.hasProperty(encoding, "contentType")) return undefined
    if (typeof encoding.contentType !== "string") return undefined
    contentType = encoding.contentType
  }
  const status = statusOf(schema.ast)
  return status === undefined ? undefined : { status, contentType }
}

/** The annotations holding the status: the last check's that has one (groups searched), else the schema's own. */
const statusAnnotations = (checks: ReadonlyArray<SchemaAST.Check<unknown>>): Schema.Annotations.Annotations | undefined => {
  for (let index = checks.length - 1; index >= 0; index--) {
    const check = checks[index]
    if (check.annotations !== undefined && "httpApiStatus" in check.annotations) return check.annotations
    if (check._tag === "FilterGroup") {
      const inGroup = statusAnnotations(check.checks)
      if (inGroup !== undefined) return inGroup
    }
  }
  return undefined
}

/** The status as the builder reads it; an explicit `undefined` falls to 200 without reading the key's annotations. */
const statusOf = (ast: SchemaAST.AST): number | undefined => {
  const annotations = (ast.checks === undefined ? undefined : statusAnnotations(ast.checks)) ??
    (ast.annotations !== undefined && "httpApiStatus" in ast.annotations ? ast.annotations : undefined)
  const status = annotations !== undefined ? annotations.httpApiStatus : ast.context?.annotations?.httpApiStatus
  return status === undefined ? 200 : typeof status === "number" ? status : undefined
}

/**
 * The endpoint's answer from a handler's value: the JSON text of its compiled encoder as an `HttpServerResponse`, or
 * the value itself where the builder's encoding answers (an HttpServerResponse already, nothing, a schema the
 * compiler does not take, or a value the compiled encoder cannot encode). `undefined` for an endpoint whose success is
 * not one JSON body. When `checked`, every answer is also encoded by Schema with its checks: a value it refuses goes to
 * the builder (whose checked encoding answers 500), and an answer that differs from Schema's is a defect.
 */
export const answering = (endpoint: HttpApiEndpoint.Top, checked = checkingEverything()) => {
  if (endpoint.success.size !== 1) return undefined
  const [schema] = endpoint.success
  const body = jsonBodyOf(schema)
  if (body === undefined) return undefined
  const { status, contentType } = body
  // Compiled on the endpoint's first answer, not as the server starts (238 schemas: about 30 ms of a start).
  let compiled = false
  let encoder: SchemaJson.Encoder | undefined
  const encodeChecked = checked ? Schema.encodeUnknownOption(Schema.make<Schema.Codec<unknown, unknown>>(schema.ast)) : undefined
  return (value: unknown): unknown => {
    if (value === undefined || HttpServerResponse.isHttpServerResponse(value)) return value
    if (!compiled) {
      encoder = SchemaJson.compile(schema.ast)
      compiled = true
    }
    if (encoder === undefined) return value
    let text: string
    try {
      text = JSON.stringify(encoder(value))
    } catch {
      return value
    }
    if (encodeChecked !== undefined) {
      const expected = encodeChecked(value)
      if (expected._tag === "None") return value
      const schemaText = JSON.stringify(expected.value)
      if (schemaText !== text) {
        throw new Error(`The compiled encoding of ${endpoint.method} ${endpoint.path}'s answer differs from Schema's: ${text} against ${schemaText}`)
      }
    }
    return HttpServerResponse.text(text, { status, contentType })
  }
}
