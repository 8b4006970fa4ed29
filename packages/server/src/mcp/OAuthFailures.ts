/**
 * A failed exchange of an MCP OAuth connect or callback with the MCP server's metadata or its authorization server.
 */
import { ConnectionValidationFailed, type McpDiagnostic } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as References from "effect/References"
import { originOf } from "../platform/Outbound.js"
import { pathHash } from "./Diagnostics.js"
import { outboundErrorOf } from "./Session.js"

const referenceId = References.CurrentLogAnnotations.useSync((annotations) => {
  const found = annotations["requestId"]
  return found === undefined ? "unknown" : String(found)
})

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 200)

/** A failed exchange with the MCP server's metadata or its authorization server, as a 502 with a diagnostic. */
export const validationFailed = (phase: string, url: string, what: string, cause: unknown) =>
  Effect.map(referenceId, (reference) => {
    const outbound = outboundErrorOf(cause)
    const classified: Pick<McpDiagnostic, "category" | "code" | "retryable" | "operatorAction"> = outbound?.reason === "blocked"
      ? {
        category: "security_blocked",
        code: "MCP_URL_BLOCKED",
        retryable: false,
        operatorAction: "The authorization server's address is refused by the outbound guard: check the MCP server's metadata."
      }
      : outbound?.reason === "timeout"
      ? { category: "request_timeout", code: `MCP_${phase}_TIMEOUT`, retryable: true, operatorAction: "Retry later." }
      : outbound !== undefined
      ? { category: "network_failure", code: `MCP_${phase}_NETWORK`, retryable: true, operatorAction: "Retry later; check that the server is reachable." }
      : {
        category: "oauth_failure",
        code: `MCP_${phase}`,
        retryable: false,
        operatorAction: "Check the connection's OAuth settings (issuer, client) against the provider's documentation."
      }
    return new ConnectionValidationFailed({
      message: `${what}: ${outbound?.message ?? describe(cause)}`,
      diagnostic: {
        referenceId: reference,
        phase,
        message: what,
        outbound: { origin: originOf(url), pathHash: pathHash(url) },
        ...classified
      }
    })
  })

/** Runs one request of the flow; a failure is `validationFailed`'s 502. */
export const attempt = <A>(phase: string, url: string, what: string, run: () => Promise<A>) =>
  Effect.tryPromise({ try: run, catch: (cause) => cause }).pipe(Effect.catch((cause) => Effect.flip(validationFailed(phase, url, what, cause))))
