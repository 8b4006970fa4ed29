/** An endpoint annotation: the largest request body it accepts, when that differs from the server's default. */
import * as Context from "effect/Context"

/**
 * Bytes of request body the endpoint accepts, read by the server's request guard before routing, for endpoints
 * whose bodies are legitimately larger (imports) or must stay small (signed webhooks):
 * `HttpApiEndpoint.post("import", "/import", { … }).annotate(MaxBodyBytes, 10 * 1024 * 1024)`.
 */
export class MaxBodyBytes extends Context.Service<MaxBodyBytes, number>()("@orgplane/schema/MaxBodyBytes") {}

/**
 * An endpoint annotation: the handler reads the body as it came (a signed webhook, whose signature covers the raw
 * bytes). The request guard still caps its size but leaves its content alone: no nesting or NUL checks, which
 * would refuse a delivery its sender will never change. The handler owns every check of what it reads.
 */
export class RawBody extends Context.Service<RawBody, true>()("@orgplane/schema/RawBody") {}
