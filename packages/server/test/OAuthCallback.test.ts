/**
 * platform/OAuthState.ts and OAuthCallback.ts: signed states (a state a 0.1.0 server issued is still accepted, so an
 * authorization started before an upgrade completes after it; one flow's state refused by another's key), and
 * `checkCallback`'s checks in order, each refusal with its code, path and words (bad state, unknown, used, expired
 * authorization, the authorization server's error, which spends it, no code), and the answer.
 *
 * The state below was signed by 0.1.0's code (recorded from it, never re-recorded), under a cursor key of fixed bytes.
 */
import { describe, expect, it } from "@effect/vitest"
import type { McpOAuthCallbackQuery, OrganizationId } from "@orgplane/schema"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as NodeCrypto from "node:crypto"
import { AUTHORIZATION_TTL, checkCallback } from "../src/platform/OAuthCallback.js"
import { signState, stateKeyOf, verifyState } from "../src/platform/OAuthState.js"

/** A fixed cursor key (bytes 0 to 31): the one 0.1.0 signed the state below under. */
const cursorKey = Buffer.from(Array.from({ length: 32 }, (_, index) => index))
const key = stateKeyOf(cursorKey)
const keyHex = key.toString("hex")


describe("OAuthState", () => {
  it("signs states as 0.1.0 did, and accepts the ones it issued", () => {
    // The keys 0.1.0 derived from the cursor key, for MCP's flow and for the suites'.
    expect(keyHex).toBe("7c9c56b84dddb116ddc08f3591f7301edc50d72b07f6c4406532b261ed1539c1")
    expect(stateKeyOf(cursorKey, "orgplane/suite-oauth-state").toString("hex")).toBe("747a1a7507505c22fef2f2fd370609ce4bc0a0f5a6a021070c5d2ac7914622c4")
    // A state 0.1.0 issued.
    const by010 = "org_a.mca_1.Im5xiSEfRTlp5LGWhH_w7vqCMO3XaTFU1Rxb1RqmO2o"
    expect(verifyState(key, by010)).toEqual({ organizationId: "org_a", authorizationId: "mca_1" })
    expect(signState(key, "org_a", "mca_1")).toBe(by010)
  })

  it("refuses what it did not sign", () => {
    const state = signState(key, "org_a", "mca_1")
    const [organization, authorization, signature] = state.split(".")
    const otherFlow = stateKeyOf(cursorKey, "orgplane/suite-oauth-state")
    for (
      const bad of [
        "",
        "org_a.mca_1",
        `org_b.${authorization}.${signature}`,
        `${organization}.mca_2.${signature}`,
        `${organization}.${authorization}.${signature!.slice(1)}`,
        `.${authorization}.${signState(key, "", authorization!).split(".")[2]}`,
        `${state}.extra`
      ]
    ) {
      expect(verifyState(key, bad)).toBeUndefined()
    }
    expect(verifyState(otherFlow, state)).toBeUndefined()
    expect(verifyState(stateKeyOf(NodeCrypto.randomBytes(32)), state)).toBeUndefined()
  })
})

interface Pending {
  readonly usedAt: Date | null
  readonly expiresAt: Date
  readonly server: string
}

type Outcome =
  | { readonly refused: unknown; readonly spent: ReadonlyArray<string> }
  | { readonly accepted: { readonly code: string; readonly authorizationKey: unknown; readonly server: string }; readonly spent: ReadonlyArray<string> }

/** The authorizations `checkCallback` finds, by id. */
const pending = (): Record<string, Pending> => {
  const now = Date.now()
  return {
    mca_open: { usedAt: null, expiresAt: new Date(now + 60_000), server: "Issuer A" },
    mca_used: { usedAt: new Date(now - 1000), expiresAt: new Date(now + 60_000), server: "Issuer A" },
    mca_expired: { usedAt: null, expiresAt: new Date(now - 1), server: "Issuer A" }
  }
}

const options = (query: McpOAuthCallbackQuery) => ({ query, key, who: (a: Pending) => a.server, unknown: "it may have been replaced" })

/** `checkCallback` on `query`: what it refused or answered, and which authorizations it spent. */
const port = (query: McpOAuthCallbackQuery): Effect.Effect<Outcome> => {
  const authorizations = pending()
  const spent: Array<string> = []
  return checkCallback({
    ...options(query),
    find: ({ id }) => Effect.succeed(Option.fromNullishOr(authorizations[id])),
    spend: ({ id }) => Effect.sync(() => spent.push(id))
  }).pipe(
    Effect.match({
      onFailure: (refused): Outcome => ({ refused: { ...refused }, spent }),
      onSuccess: (ok): Outcome => ({ accepted: { code: ok.code, authorizationKey: ok.authorizationKey, server: ok.authorization.server }, spent })
    })
  )
}

describe("OAuthCallback.checkCallback", () => {
  const state = (id: string, organization = "org_a") => signState(key, organization, id)
  const startAgain = "start again with connect."
  const noCode = { path: ["code"], code: "oauth_code_missing", message: "The callback carries neither `code` nor `error`." }
  const cases: ReadonlyArray<readonly [string, McpOAuthCallbackQuery, { readonly path: ReadonlyArray<string>; readonly code: string; readonly message: string } | undefined]> = [
    ["a state it did not sign", { state: "org_a.mca_open.forged", code: "c" }, { path: ["state"], code: "oauth_state_invalid", message: `The \`state\` is not one this server issued: ${startAgain}` }],
    ["an unknown authorization", { state: state("mca_gone"), code: "c" }, { path: ["state"], code: "oauth_state_invalid", message: `The authorization is unknown (it may have been replaced): ${startAgain}` }],
    ["a used authorization", { state: state("mca_used"), code: "c" }, { path: ["state"], code: "oauth_authorization_used", message: `This authorization was already used: ${startAgain}` }],
    ["an expired authorization", { state: state("mca_expired"), code: "c" }, { path: ["state"], code: "oauth_authorization_expired", message: `This authorization expired (they last 10 minutes): ${startAgain}` }],
    [
      "access denied",
      { state: state("mca_open"), error: "access_denied", error_description: "the user said no" },
      { path: ["error"], code: "oauth_access_denied", message: "The authorization was denied (access_denied: the user said no). Nothing was connected." }
    ],
    [
      "another error",
      { state: state("mca_open"), error: "server_error".repeat(20), error_description: "x".repeat(400) },
      // The server's words cut to their first 100 and 300 characters.
      { path: ["error"], code: "oauth_authorization_refused", message: `Issuer A refused the authorization (${"server_error".repeat(20).slice(0, 100)}: ${"x".repeat(300)}). Nothing was connected.` }
    ],
    ["no code", { state: state("mca_open") }, noCode],
    ["an empty code", { state: state("mca_open"), code: "" }, noCode],
    ["a code", { state: state("mca_open"), code: "the-code" }, undefined]
  ]

  for (const [name, query, refusal] of cases) {
    it.live(`answers ${name}`, () =>
      Effect.gen(function*() {
        const mine = yield* port(query)
        if (refusal === undefined) {
          expect(mine).toEqual({ accepted: { code: "the-code", authorizationKey: { organizationId: "org_a" as OrganizationId, id: "mca_open" }, server: "Issuer A" }, spent: [] })
        } else {
          expect(mine).toMatchObject({ refused: { _tag: "InvalidRequest", error: "invalid_request", details: [refusal] } })
          // Only the authorization server's refusal spends the authorization.
          expect(mine.spent).toEqual(query.error === undefined ? [] : ["mca_open"])
        }
      }))
  }

  it("lets an authorization URL live 10 minutes", () => {
    expect(Duration.toMillis(AUTHORIZATION_TTL)).toBe(10 * 60_000)
  })
})
