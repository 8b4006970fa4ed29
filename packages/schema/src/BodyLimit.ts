/** An endpoint annotation: the largest request body it accepts, when that differs from the server's default. */
import { Context } from "effect"

/**
 * Bytes of request body the endpoint accepts, read by the server's request guard before routing, for endpoints
 * whose bodies are legitimately larger (imports) or must stay small (signed webhooks):
 * `HttpApiEndpoint.post("import", "/import").annotate(MaxBodyBytes, 10 * 1024 * 1024)`.
 */
export class MaxBodyBytes extends Context.Tag("@orgplane/schema/MaxBodyBytes")<MaxBodyBytes, number>() {}
