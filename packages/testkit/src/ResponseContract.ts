/**
 * The OpenAPI document as a contract on answers: whether one response is what the document declares for the request
 * that caused it. Ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1) validates bodies against the document's own
 * schemas; nothing here restates a schema.
 *
 * The rule, for a request `METHOD target` answered `status`, `Content-Type`, body:
 * - The operation is the document's path whose template matches the target's path (`?` ends it; a trailing slash is
 *   ignored, as the server ignores it), most literal segments first, among the paths that have the method; HEAD is
 *   checked as the path's GET (its answer carries no body).
 * - The status must be declared by that operation: exactly, by its range (`4XX`) or by a `default`.
 * - A body must be of a media type the status declares (its parameters, `charset` say, are not compared), and a JSON
 *   one (`application/json`, `application/*+json`) declared as JSON must parse and validate against that media type's
 *   schema; one that falls under a wildcard (`*\/*`: a stored file served with its own media type) is bytes. An
 *   empty body is allowed where the status declares no content, in a media type that is not JSON (an export of
 *   nothing), and for HEAD, 204 and 304.
 * - A request no operation takes (an unknown path, a method its path does not have, OPTIONS, a target read two ways,
 *   which the server refuses before routing, a request Node's parser refused before it had a target) is held to the answers the document declares for any request,
 *   `x-orgplane-unrouted-responses` (a Responses object at the document's root): 404 for no such path, 405 for
 *   another method, and what is refused before routing (400, 413, 414, 431). A strict client that sent such a request
 *   can read nothing else, since no operation tells it more.
 * - What the server serves beside the API, not as its operations (`beside`: the server's `docsRoutes`, the document
 *   itself and its reference page), is not held to the document when asked with the method it is served with (HEAD
 *   with GET).
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"

/** One answer of the server, as sent. */
export interface Answer {
  readonly method: string
  /** The request target as sent (path and query); undefined when the request was refused before it had one. */
  readonly target: string | undefined
  readonly status: number
  /** The `Content-Type` header as sent. */
  readonly contentType: string | undefined
  readonly body: Uint8Array
}

/** What is wrong with an answer, in a sentence; undefined when the document declares it. */
export type Checker = (answer: Answer) => string | undefined

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
type JsonObject = { readonly [key: string]: Json }

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

// ajv-formats is CommonJS whose `default` is the function; its ESM view depends on the loader.
const addFormats: (ajv: Ajv2020) => unknown = typeof addFormatsModule === "function"
  ? addFormatsModule
  : (addFormatsModule as { readonly default: (ajv: Ajv2020) => unknown }).default

const escapePointer = (segment: string) => segment.replace(/~/g, "~0").replace(/\//g, "~1")

/** The member at a JSON pointer of the document. */
const at = (document: JsonObject, pointer: ReadonlyArray<string>): Json | undefined => {
  let node: Json | undefined = document
  for (const segment of pointer) node = isObject(node) ? node[segment] : undefined
  return node
}

/** A response object and where it is, following `$ref`s to `components.responses`. */
const resolve = (document: JsonObject, pointer: ReadonlyArray<string>): { readonly node: JsonObject; readonly pointer: ReadonlyArray<string> } | undefined => {
  const node = at(document, pointer)
  if (!isObject(node)) return undefined
  const ref = node.$ref
  if (typeof ref === "string" && ref.startsWith("#/")) {
    return resolve(document, ref.slice(2).split("/").map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~")))
  }
  return { node, pointer }
}

interface Route {
  readonly template: string
  /** One pattern per segment: a literal, or a template segment as a regular expression. */
  readonly segments: ReadonlyArray<string | RegExp>
  readonly literals: number
  readonly methods: ReadonlySet<string>
}

const segmentPattern = (segment: string): string | RegExp =>
  segment.includes("{")
    ? new RegExp(`^${segment.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[^/]+")}$`)
    : segment

const routesOf = (document: JsonObject): ReadonlyArray<Route> => {
  const paths = isObject(document.paths) ? document.paths : {}
  return Object.entries(paths).map(([template, item]) => {
    const segments = template.split("/").slice(1).map(segmentPattern)
    const methods = new Set(Object.keys(isObject(item) ? item : {}).map((method) => method.toUpperCase()))
    return { template, segments, literals: segments.filter((segment) => typeof segment === "string").length, methods }
  }).sort((a, b) => b.literals - a.literals)
}

/**
 * The path of a request target: up to `?`, without a trailing slash; of an absolute-form target
 * (`http://host/v1/me`), from the first slash after its host, as the server reads it.
 */
const pathOf = (target: string) => {
  const origin = /^https?:\/\/[^/?#]*/i.exec(target)
  const path = (origin === null ? target : target.slice(origin[0].length) || "/").split("?", 1)[0]!
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path
}

const matches = (route: Route, segments: ReadonlyArray<string>) =>
  route.segments.length === segments.length &&
  route.segments.every((pattern, i) => typeof pattern === "string" ? pattern === segments[i] : segments[i] !== "" && pattern.test(segments[i]!))

const mediaTypeOf = (contentType: string) => contentType.split(";", 1)[0]!.trim().toLowerCase()

const isJson = (essence: string) => essence === "application/json" || /^application\/[^/]+\+json$/.test(essence)

/** The declared media type a sent one falls under: itself, `type/*` or `*\/*`. */
const declaredMediaType = (content: JsonObject, essence: string): string | undefined => {
  const declared = Object.keys(content)
  return declared.find((type) => type.toLowerCase() === essence) ??
    declared.find((type) => type.toLowerCase() === `${essence.split("/")[0]}/*`) ??
    declared.find((type) => type === "*/*")
}

const excerpt = (body: Uint8Array) => {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8")
  return text.length > 300 ? `${text.slice(0, 300)}…` : text
}

/**
 * The checker of one document. Each schema is compiled the first time an answer needs it, once: the document is one
 * Ajv schema resource, and `inlineRefs: false` compiles each component once however many answers refer to it (a
 * media type whose schema is a component's reference shares that component's validator). What an operation declares
 * is read once too; an answer that is right costs its route's lookup, a JSON parse and the validation.
 */
export const make = (
  document: object,
  options: {
    readonly beside: ReadonlyArray<readonly [method: string, path: string]>
    /**
     * Why a target is refused before routing, whatever its path (the server's `pathAmbiguity`: a target the API's
     * description says is read two ways, a `#` in the query among them), or undefined: such a request is taken by no
     * operation, so it is held to the answers to any request.
     */
    readonly refusedBeforeRouting?: (target: string) => string | undefined
    /** The document's member that holds the answers to any request, routed or not (the schema's `unroutedMember`). */
    readonly unroutedMember: string
  }
): Checker => {
  const { unroutedMember } = options
  const spec = JSON.parse(JSON.stringify(document)) as JsonObject
  const ajv = new Ajv2020({
    allErrors: false,
    inlineRefs: false,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    validateSchema: false,
    logger: false
  })
  addFormats(ajv)
  // OpenAPI's own keywords and formats in a Schema Object: annotations, which validate nothing.
  ajv.addVocabulary(["discriminator", "xml", "externalDocs", "example"])
  ajv.addFormat("binary", true)
  // The document as one schema resource, so that its `#/components/schemas/...` references resolve: its root holds
  // the members answers' schemas are in (as annotations to Ajv, which compiles the root to resolve references).
  const documentId = "urn:orgplane:openapi"
  const members = ["paths", "components", unroutedMember] as const
  ajv.addVocabulary([...members])
  ajv.addSchema({ $id: documentId, ...Object.fromEntries(members.map((member) => [member, spec[member] ?? {}])) })
  const validators = new Map<string, ValidateFunction>()
  /** A media type's validator, shared by every answer whose schema is the same reference (`UriTooLong`, say). */
  const validatorOf = (schema: Json | undefined, pointer: ReadonlyArray<string>) => {
    const ref = isObject(schema) && typeof schema.$ref === "string" && Object.keys(schema).length === 1 && schema.$ref.startsWith("#/")
      ? `${documentId}${schema.$ref}`
      : `${documentId}#/${pointer.map(escapePointer).join("/")}`
    let validate = validators.get(ref)
    if (validate === undefined) validators.set(ref, validate = ajv.compile({ $ref: ref }))
    return validate
  }

  const routes = routesOf(spec)
  const bySegments = new Map<number, Array<Route>>()
  for (const route of routes) bySegments.set(route.segments.length, [...(bySegments.get(route.segments.length) ?? []), route])
  const beside = new Set(options.beside.map(([method, path]) => `${method} ${path}`))

  /** What one operation (or the document's answers to any request) declares, read once. */
  interface Declared {
    readonly name: string
    readonly responses: ReadonlyArray<string>
    readonly statuses: ReadonlyArray<string>
    readonly byStatus: Map<string, { readonly content: JsonObject | undefined; readonly types: ReadonlyArray<string>; readonly pointer: ReadonlyArray<string> }>
  }
  const declarations = new Map<string, Declared>()
  const declaredAt = (key: string, responses: ReadonlyArray<string>, name: string): Declared => {
    let found = declarations.get(key)
    if (found === undefined) {
      const node = at(spec, responses)
      declarations.set(key, found = { name, responses, statuses: isObject(node) ? Object.keys(node) : [], byStatus: new Map() })
    }
    return found
  }
  const unrouted = () => declaredAt("", [unroutedMember], `any request (${unroutedMember})`)

  /** What the operation that takes the request declares; the document's answers to any request when none does. */
  const declaredFor = (method: string, target: string | undefined): Declared => {
    if (target === undefined || options.refusedBeforeRouting?.(target) !== undefined) return unrouted()
    const segments = pathOf(target).split("/").slice(1)
    const asMethod = method === "HEAD" ? "GET" : method
    const route = bySegments.get(segments.length)?.find((route) => route.methods.has(asMethod) && matches(route, segments))
    if (route === undefined) return unrouted()
    const lower = asMethod.toLowerCase()
    return declaredAt(`${asMethod} ${route.template}`, ["paths", route.template, lower, "responses"], (() => {
      const operation = at(spec, ["paths", route.template, lower])
      const id = isObject(operation) && typeof operation.operationId === "string" ? ` (${operation.operationId})` : ""
      return `${asMethod} ${route.template}${id}`
    })())
  }

  const statusOf = (declared: Declared, key: string) => {
    let found = declared.byStatus.get(key)
    if (found === undefined) {
      const response = resolve(spec, [...declared.responses, key])
      const content = response !== undefined && isObject(response.node.content) ? response.node.content : undefined
      declared.byStatus.set(key, found = { content, types: content === undefined ? [] : Object.keys(content), pointer: response?.pointer ?? [] })
    }
    return found
  }

  return (answer) => {
    const method = answer.method.toUpperCase()
    if (answer.target !== undefined && beside.has(`${method === "HEAD" ? "GET" : method} ${pathOf(answer.target)}`)) return undefined
    const declared = declaredFor(method, answer.target)
    const name = declared.name
    const status = String(answer.status)
    const key = [status, `${status[0]}XX`, "default"].find((candidate) => declared.statuses.includes(candidate))
    // Worded only for an answer that is wrong.
    const said = () => `${answer.method} ${answer.target ?? "(no target)"} answered ${answer.status}${answer.contentType === undefined ? "" : ` ${answer.contentType}`}`
    const sent = () => answer.body.byteLength === 0 ? "" : `: ${excerpt(answer.body)}`
    if (key === undefined) return `${said()}, a status ${name} does not declare (it declares ${declared.statuses.join(", ") || "none"})${sent()}`
    const { content, pointer, types } = statusOf(declared, key)
    const bodiless = method === "HEAD" || answer.status === 204 || answer.status === 304
    if (answer.body.byteLength === 0) {
      // Nothing to read: fine where no body is declared, and in a declared media type that can be empty (not JSON).
      if (types.length === 0 || bodiless) return undefined
      const sentType = answer.contentType === undefined ? undefined : mediaTypeOf(answer.contentType)
      if (sentType !== undefined && !isJson(sentType) && content !== undefined && declaredMediaType(content, sentType) !== undefined) return undefined
      return `${said()} with no body, where ${name} declares ${types.join(", ")} for ${key}`
    }
    if (content === undefined || types.length === 0) return `${said()}, a body where ${name} declares none for ${key}${sent()}`
    if (answer.contentType === undefined) return `${said()} with a body and no Content-Type; ${name} declares ${types.join(", ")} for ${key}${sent()}`
    const essence = mediaTypeOf(answer.contentType)
    const mediaType = declaredMediaType(content, essence)
    if (mediaType === undefined) return `${said()}, a media type ${name} does not declare for ${key} (it declares ${types.join(", ")})${sent()}`
    const media = content[mediaType]
    if (!isJson(essence) || !isJson(mediaType.toLowerCase()) || !isObject(media) || media.schema === undefined) return undefined
    let value: unknown
    try {
      value = JSON.parse(Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength).toString("utf8"))
    } catch {
      return `${said()}, a body that is not JSON${sent()}`
    }
    const validate = validatorOf(media.schema, [...pointer, "content", mediaType, "schema"])
    if (validate(value)) return undefined
    return `${said()}, a body outside the schema ${name} declares for ${key} ${mediaType} (${ajv.errorsText(validate.errors, { separator: "; " })})${sent()}`
  }
}
