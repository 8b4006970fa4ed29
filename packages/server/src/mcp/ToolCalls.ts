/**
 * The tool call endpoint's service: the checks in their order (role, the connection in the organization, a grant
 * reaching the caller, readiness, the tool policy), the caller's credential headers, then the tool runner outside
 * any transaction. Nothing is stored.
 */
import {
  ConnectionNotReady,
  type ExternalMcpConnectionId,
  Forbidden,
  type McpDiagnostic,
  type McpToolCallRequest,
  type McpToolCallResponse,
  type McpToolCatalog,
  type MemberContext,
  ToolCatalogFailed,
  ToolExecutionFailed
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Access, McpConnectionKind } from "../access/Access.js"
import { authorize } from "../platform/Principal.js"
import { currentRequestId } from "../platform/RequestLog.js"
import { Outbound } from "../platform/Outbound.js"
import { orUnavailable } from "../platform/Sql.js"
import { Memberships } from "../identity/Memberships.js"
import { toolPolicyOf } from "./Connections.js"
import { ConnectionsRepository, type McpConnectionRow } from "./ConnectionsRepository.js"
import { Credentials } from "./Credentials.js"
import * as Readiness from "./Readiness.js"
import { ToolConfig } from "./ToolConfig.js"
import * as ToolRunner from "./ToolRunner.js"

/** At most 100 characters of a value in a message. */
const quote = (value: string) => (value.length > 100 ? `${value.slice(0, 100)}…` : value)

const day = (at: Date) => at.toISOString().slice(0, 10)

/**
 * The refusal of a tool the organization's policy disables, saying who changed the policy and when, if known
 * (`by`: the member's name or email).
 */
export const toolDisabled = (
  row: Pick<McpConnectionRow, "name" | "toolPolicyAllDisabled" | "toolPolicyUpdatedAt">,
  toolName: string,
  by: string | undefined
) => {
  const who = by === undefined ? "An admin" : quote(by)
  const since = row.toolPolicyUpdatedAt === null ? "" : ` ${who} changed the tool policy on ${day(row.toolPolicyUpdatedAt)}.`
  const all = row.toolPolicyAllDisabled ? ` Every tool of "${quote(row.name)}" is disabled.` : ""
  return new Forbidden({ reason: "tool_disabled", message: `"${quote(toolName)}" is disabled for your organization.${all}${since}` })
}

/**
 * A refused OAuth credential is fixed by connecting again: the diagnostic names where (`connectUrl`, the API path
 * that starts the connect flow for the caller: the organization's account on a shared connection, their own on a
 * per-member one).
 */
export const withConnectUrl = (diagnostic: McpDiagnostic, row: Pick<McpConnectionRow, "id" | "authType">): McpDiagnostic =>
  row.authType === "oauth" && (diagnostic.category === "oauth_resource_rejected" || diagnostic.category === "oauth_insufficient_scope")
    ? { ...diagnostic, connectUrl: `/v1/mcp-connections/${row.id}/connect` }
    : diagnostic

const make = Effect.gen(function*() {
  const repository = yield* ConnectionsRepository
  const access = yield* Access
  const credentials = yield* Credentials
  const outbound = yield* Outbound
  const config = yield* ToolConfig
  const memberships = yield* Memberships

  /** The checks a call and a listing share, in order, and the caller's credential headers. */
  const prepare = (caller: MemberContext, connectionId: ExternalMcpConnectionId) =>
    Effect.gen(function*() {
      yield* authorize(caller, "mcp.callTools")
      const organizationId = caller.organization.id
      const { credential, row } = yield* orUnavailable(Effect.gen(function*() {
        // 404 for a missing or another organization's connection, 403 unless a grant reaches the caller (admins too).
        yield* access.requireUsable(caller, McpConnectionKind, connectionId)
        const found = yield* repository.findRow(organizationId, connectionId)
        if (found._tag === "None") return yield* Effect.fail(McpConnectionKind.notFound())
        const row = found.value
        const credential = row.credentialMode === "per_member"
          ? yield* repository.findMemberCredential(organizationId, connectionId, caller.membership.id)
          : undefined
        return { row, credential: credential === undefined || credential._tag === "None" ? undefined : credential.value }
      }))
      const readiness = Readiness.of(row, credential)
      if (!readiness.ready) return yield* Effect.fail(new ConnectionNotReady({ message: readiness.message ?? "The connection is not ready." }))
      return { row }
    })

  const runnerInput = (row: McpConnectionRow, headers: Record<string, string>, referenceId: string) => ({
    url: row.url,
    headers,
    referenceId,
    sharedCredential: row.credentialMode === "shared",
    authType: row.authType
  })

  /**
   * Runs `attempt` with the caller's headers; when the MCP server refused an OAuth token (401, nothing ran), once
   * more with a renewed one if the credential can be renewed (`Credentials.renewAfterRejection`, which otherwise
   * marks it `reconnect_required`).
   */
  const withRenewal = <A, E extends { readonly diagnostic: McpDiagnostic }, R>(
    caller: MemberContext,
    row: McpConnectionRow,
    headers: Record<string, string>,
    attempt: (headers: Record<string, string>) => Effect.Effect<A, E, R>
  ) =>
    Effect.catchIf(
      attempt(headers),
      (failure) => row.authType === "oauth" && failure.diagnostic.httpStatus === 401,
      (failure) =>
        Effect.flatMap(
          credentials.renewAfterRejection(caller, row, headers),
          Option.match({ onNone: () => Effect.fail(failure), onSome: attempt })
        )
    )

  const call = Effect.fn("ToolCalls.call")(function*(caller: MemberContext, connectionId: ExternalMcpConnectionId, request: McpToolCallRequest) {
    const { row } = yield* prepare(caller, connectionId)
    if (row.toolPolicyAllDisabled || row.toolPolicyDisabledTools.includes(request.toolName)) {
      const editor = row.toolPolicyUpdatedByMembershipId === null
        ? undefined
        : Option.getOrUndefined(yield* orUnavailable(memberships.find({ organizationId: row.organizationId, id: row.toolPolicyUpdatedByMembershipId })))
      return yield* Effect.fail(toolDisabled(row, request.toolName, editor?.name ?? editor?.email ?? undefined))
    }
    const headers = yield* credentials.headersFor(caller, row)
    const referenceId = yield* currentRequestId
    const attempt = (headers: Record<string, string>) =>
      ToolRunner.run({ ...runnerInput(row, headers, referenceId), toolName: request.toolName, arguments: request.arguments }).pipe(
        Effect.mapError((failure) =>
          new ToolExecutionFailed({
            message: `Could not run "${quote(request.toolName)}" on "${quote(row.name)}": ${failure.diagnostic.message} Reference: ${referenceId}.`,
            diagnostic: withConnectUrl(failure.diagnostic, row),
            inspection: failure.inspection
          })
        )
      )
    const run = yield* withRenewal(caller, row, headers, attempt).pipe(
      Effect.provideService(Outbound, outbound),
      Effect.provideService(ToolConfig, config)
    )
    const response: McpToolCallResponse = run
    return response
  })

  const listTools = Effect.fn("ToolCalls.listTools")(function*(caller: MemberContext, connectionId: ExternalMcpConnectionId) {
    const { row } = yield* prepare(caller, connectionId)
    const headers = yield* credentials.headersFor(caller, row)
    const referenceId = yield* currentRequestId
    const attempt = (headers: Record<string, string>) =>
      ToolRunner.listTools(runnerInput(row, headers, referenceId)).pipe(
        Effect.mapError((failure) =>
          new ToolCatalogFailed({
            message: `Could not list the tools of "${quote(row.name)}": ${failure.diagnostic.message} Reference: ${referenceId}.`,
            diagnostic: withConnectUrl(failure.diagnostic, row)
          })
        )
      )
    const catalog = yield* withRenewal(caller, row, headers, attempt).pipe(
      Effect.provideService(Outbound, outbound),
      Effect.provideService(ToolConfig, config)
    )
    const disabled = new Set(row.toolPolicyDisabledTools)
    const response: McpToolCatalog = {
      referenceId,
      truncated: catalog.truncated,
      tools: catalog.tools.map((tool) => ({ ...tool, disabled: row.toolPolicyAllDisabled || disabled.has(tool.name) })),
      policy: toolPolicyOf(row)
    }
    return response
  })

  return { call, listTools } as const
})

export class ToolCalls extends Context.Service<ToolCalls>()("@orgplane/server/mcp/ToolCalls", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      ConnectionsRepository.layer,
      Access.layer,
      Credentials.layer,
      Memberships.layer
    ])
  )
}
