/**
 * platform/OAuthState.ts and OAuthCallback.ts, held to their Effect 3 originals on the same inputs: the same signed
 * states (a state a 0.1.0 server issued is accepted here, and the other way round; one flow's refused by another's
 * key), and `checkCallback`'s checks in the same order with the same refusals (bad state, unknown, used, expired
 * authorization, the authorization server's error, which spends it, no code) and the same answer.
 *
 * The originals' answers are read from the recorded fixture (test/fixtures/effect3/OAuthCallback.json,
 * support/Effect3.ts): what 0.1.0's originals answered, each under its function and inputs. The cursor key the state
 * key is derived from is fixed bytes, the ones the recorded keys name (as hex, in the keys and values).
 */
import { describe, expect, it } from "@effect/vitest"
import type { McpOAuthCallbackQuery, OrganizationId } from "@orgplane/schema"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as NodeCrypto from "node:crypto"
import { AUTHORIZATION_TTL, checkCallback } from "../src/platform/OAuthCallback.js"
import { signState, stateKeyOf, verifyState } from "../src/platform/OAuthState.js"
import * as Recorded from "./support/Effect3.js"

/** The originals' answers, recorded (support/Effect3.ts). */
const effect3 = Recorded.originals("OAuthCallback")

/** A fixed cursor key (bytes 0 to 31): the states signed under it are the ones recorded. */
const cursorKey = Buffer.from(Array.from({ length: 32 }, (_, index) => index))
const key = stateKeyOf(cursorKey)
const keyHex = key.toString("hex")

/** The original's `verifyState` under `key` of `state`, recorded. */
const originalVerify = (state: string) =>
  effect3(Recorded.call("verifyState", keyHex, state))

describe("OAuthState", () => {
  it("signs the states the original signs, and each verifies the other's", () => {
    const cursorHex = cursorKey.toString("hex")
    expect(keyHex).toBe(effect3(Recorded.call("stateKeyOf", cursorHex)))
    expect(stateKeyOf(cursorKey, "orgplane/suite-oauth-state").toString("hex")).toBe(
      effect3(Recorded.call("stateKeyOf", cursorHex, "orgplane/suite-oauth-state"))
    )
    const state = signState(key, "org_a", "mca_1")
    expect(state).toBe(effect3(Recorded.call("signState", keyHex, "org_a", "mca_1")))
    expect(state.startsWith("org_a.mca_1.")).toBe(true)
    expect(verifyState(key, state)).toEqual({ organizationId: "org_a", authorizationId: "mca_1" })
    expect(originalVerify(state)).toEqual(verifyState(key, state))
  })

  it("refuses what it did not sign, as the original does", () => {
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
      expect(originalVerify(bad)).toBeUndefined()
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

/** The authorizations both sides find, by id. */
const pending = (): Record<string, Pending> => {
  const now = Date.now()
  return {
    mca_open: { usedAt: null, expiresAt: new Date(now + 60_000), server: "Issuer A" },
    mca_used: { usedAt: new Date(now - 1000), expiresAt: new Date(now + 60_000), server: "Issuer A" },
    mca_expired: { usedAt: null, expiresAt: new Date(now - 1), server: "Issuer A" }
  }
}

const options = (query: McpOAuthCallbackQuery) => ({ query, key, who: (a: Pending) => a.server, unknown: "it may have been replaced" })

/** `checkCallback` of the port on `query`: what it refused or answered, and which authorizations it spent. */
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

/** The same of the Effect 3 original, recorded. */
const original = (query: McpOAuthCallbackQuery): Promise<Outcome> =>
  effect3.await<Outcome>(Recorded.call("checkCallback", keyHex, query))

describe("OAuthCallback.checkCallback", () => {
  const state = (id: string, organization = "org_a") => signState(key, organization, id)
  const cases: ReadonlyArray<readonly [string, McpOAuthCallbackQuery, unknown]> = [
    ["a state it did not sign", { state: "org_a.mca_open.forged", code: "c" }, "oauth_state_invalid"],
    ["an unknown authorization", { state: state("mca_gone"), code: "c" }, "oauth_state_invalid"],
    ["a used authorization", { state: state("mca_used"), code: "c" }, "oauth_authorization_used"],
    ["an expired authorization", { state: state("mca_expired"), code: "c" }, "oauth_authorization_expired"],
    ["access denied", { state: state("mca_open"), error: "access_denied", error_description: "the user said no" }, "oauth_access_denied"],
    ["another error", { state: state("mca_open"), error: "server_error".repeat(20), error_description: "x".repeat(400) }, "oauth_authorization_refused"],
    ["no code", { state: state("mca_open") }, "oauth_code_missing"],
    ["an empty code", { state: state("mca_open"), code: "" }, "oauth_code_missing"],
    ["a code", { state: state("mca_open"), code: "the-code" }, undefined]
  ]

  for (const [name, query, code] of cases) {
    it.live(`answers ${name} as the original does`, () =>
      Effect.gen(function*() {
        const mine = yield* port(query)
        expect(mine).toEqual(yield* Effect.promise(() => original(query)))
        if (code === undefined) {
          expect(mine).toMatchObject({ accepted: { code: "the-code", authorizationKey: { organizationId: "org_a" as OrganizationId, id: "mca_open" } }, spent: [] })
        } else {
          expect(mine).toMatchObject({ refused: { _tag: "InvalidRequest", details: [{ code }] } })
          // Only the authorization server's refusal spends the authorization.
          expect(mine.spent).toEqual(query.error === undefined ? [] : ["mca_open"])
        }
      }))
  }

  it("lets an authorization URL live 10 minutes", () => {
    expect(Duration.toMillis(AUTHORIZATION_TTL)).toBe(10 * 60_000)
  })
})
