/**
 * An account belongs to whoever proved its email (issue 55), held by a model of the identity core rather than a list
 * of paths. fast-check draws sequences of what four people (ana and abe of A's domain, bo of B's, oz of a domain no
 * one verified), the owners and SCIM directories of two organizations and the instance's operator do through the
 * public API: sign up with any address, sign in by password or through SSO (A: a real OpenID Provider, B: a real SAML
 * IdP), move an account to another address, prove an address or recover an account by mailed link, get invited and
 * accept signed in or by signing up, be provisioned, deactivated, deleted and reactivated by a directory, have reset
 * links issued by an owner or the operator, change passwords, make and revoke API keys, make organizations, delete and
 * restore them. One server serves every run (each run's people get fresh addresses on the organizations' domains),
 * and after every step the rule is checked against it.
 *
 * The oracle (test/support/OwnershipModel.ts): each person owns one address, its mailbox and its identity at the IdP
 * of its domain. An account belongs to whoever made it (sign-up, an invitation accepted by signing up), or to the
 * person SSO or a directory made it for, until the owner of its address proves that address by a way in of their
 * own: an SSO sign-in landing in it, a reset link sent to the address and used, their directory provisioning them
 * into it. Then it is theirs, and everything anyone else held into it must end. After each step every credential the
 * model holds is tried (`GET /v1/me` with each session and API key, a password sign-in with each password): one the
 * model says was revoked must answer no more, one that works must reach its own account, owned by its holder; an
 * SSO sign-in must land in a new account, one of the person's, or one with their address; a password an
 * organization's owner set with a reset link they kept may reach the account only while that organization alone holds
 * it. Links go where mail goes: mailed invitations and reset links to the address's mailbox, a verification link to
 * whoever asked (one arriving unasked is not clicked); a shown invitation's token to its inviter (an owner's session or
 * API key), who sends it on to anyone, and whoever accepts it proves nothing of the address. Nothing is predicted that the rule does not demand: a credential may
 * stop working for reasons of the server's own, but never starts again once revoked.
 *
 * `ORGPLANE_MODEL_RUNS` runs (default 25) of up to `ORGPLANE_MODEL_STEPS` drawn steps (default 40; those the model
 * does not allow yet are skipped); `.ci/run` runs it longer (120 runs of up to 80 steps). A failure prints when it was found, the shrunk steps, what
 * the server answered in them, and how to replay it (`ORGPLANE_MODEL_SEED`, `ORGPLANE_MODEL_PATH`,
 * `ORGPLANE_MODEL_REPLAY`); `ORGPLANE_MODEL_WITHOUT` leaves kinds of steps out, to look past what one finds first.
 */
import fc from "fast-check"
import { afterAll, beforeAll, describe, it } from "vitest"
import * as IdentityWorld from "../support/IdentityWorld.js"
import {
  acceptInvitation,
  deleteOrganization,
  deprovision,
  invite,
  operatorIssuesReset,
  ownerIssuesReset,
  provision,
  reactivate,
  restoreOrganization,
  restoreShared
} from "../support/OwnershipAdministration.js"
import { type Holder, newModel, PEOPLE, type Person } from "../support/OwnershipModel.js"
import {
  changeEmail,
  changePassword,
  createApiKey,
  createOrganization,
  passwordSignIn,
  recoverByMail,
  revokeApiKey,
  signUp,
  ssoSignIn,
  type Step,
  useReset,
  useVerification,
  verifyByMail
} from "../support/OwnershipSteps.js"

const person = fc.constantFrom(...PEOPLE)
const holder = fc.constantFrom<Holder>(...PEOPLE, "owner of A", "owner of B")
const organization = fc.constantFrom<IdentityWorld.OrganizationLabel>("A", "B")
/** A person and the organization whose domain their address is of: whom a directory provisions. */
const employee = fc.constantFrom<[IdentityWorld.OrganizationLabel, Person]>(["A", "ana"], ["A", "abe"], ["B", "bo"])
const pick = fc.nat({ max: 7 })
/** Whether a link is kept to be used later (a step of its own), rather than at once: now and then. */
const deferred = fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) })

/**
 * Every kind of step and how often it is drawn. Sign-ups with whatever address, SSO sign-ins, address changes and
 * provisioning make and take accounts over, so they come most often; journeys a person makes in one go (asking for a
 * link and using it, being invited and accepting) are single steps, with a variant that keeps the link for later, so
 * deep states come within a run's reach. A step the model does not allow yet (no session to act with, an address
 * an account has already) is skipped, not run.
 */
const kinds = {
  signUp: { weight: 6, arbitrary: fc.tuple(person, person).map(([who, address]) => signUp(who, address)) },
  passwordSignIn: { weight: 1, arbitrary: fc.tuple(person, pick).map(([who, index]) => passwordSignIn(who, index)) },
  ssoSignIn: { weight: 7, arbitrary: person.map(ssoSignIn) },
  changeEmail: { weight: 5, arbitrary: fc.tuple(person, pick, pick).map(([who, index, to]) => changeEmail(who, index, to)) },
  changePassword: { weight: 1, arbitrary: fc.tuple(person, pick, fc.boolean()).map(([who, index, keys]) => changePassword(who, index, keys)) },
  verifyByMail: { weight: 2, arbitrary: fc.tuple(person, pick, deferred).map(([who, index, later]) => verifyByMail(who, index, later)) },
  useVerification: { weight: 1, arbitrary: fc.tuple(person, pick).map(([who, index]) => useVerification(who, index)) },
  recoverByMail: { weight: 3, arbitrary: fc.tuple(person, fc.boolean(), deferred).map(([who, keys, later]) => recoverByMail(who, keys, later)) },
  useReset: { weight: 1, arbitrary: fc.tuple(holder, pick, fc.boolean()).map(([who, index, keys]) => useReset(who, index, keys)) },
  createOrganization: { weight: 1, arbitrary: fc.tuple(person, pick).map(([who, index]) => createOrganization(who, index)) },
  createApiKey: { weight: 2, arbitrary: fc.tuple(person, pick, pick).map(([who, index, where]) => createApiKey(who, index, where)) },
  revokeApiKey: { weight: 1, arbitrary: fc.tuple(person, pick).map(([who, index]) => revokeApiKey(who, index)) },
  invite: {
    weight: 3,
    arbitrary: fc.tuple(
      organization,
      person,
      fc.constantFrom<"member" | "admin">("member", "admin"),
      fc.constantFrom<"session" | "key">("session", "key"),
      fc.constantFrom<"mailed" | "shown">("mailed", "shown"),
      person,
      fc.constantFrom<"signUp" | "signedIn" | "later">("signUp", "signedIn", "later")
    ).map(([where, who, role, by, delivery, sendTo, then]) => invite(where, who, role, by, delivery, sendTo, then))
  },
  acceptInvitation: {
    weight: 1,
    arbitrary: fc.tuple(person, pick, fc.constantFrom<"signUp" | "signedIn">("signUp", "signedIn"), pick).map(([who, index, how, session]) => acceptInvitation(who, index, how, session))
  },
  provision: { weight: 4, arbitrary: employee.map(([where, who]) => provision(where, who)) },
  deprovision: { weight: 1, arbitrary: fc.tuple(employee, fc.constantFrom<"deactivate" | "delete">("deactivate", "delete")).map(([[where, who], how]) => deprovision(where, who, how)) },
  reactivate: { weight: 1, arbitrary: employee.map(([where, who]) => reactivate(where, who)) },
  ownerIssuesReset: { weight: 1, arbitrary: fc.tuple(organization, pick, fc.boolean(), deferred).map(([where, index, kept, later]) => ownerIssuesReset(where, index, kept, later)) },
  operatorIssuesReset: { weight: 1, arbitrary: fc.tuple(pick, deferred).map(([index, later]) => operatorIssuesReset(index, later)) },
  deleteOrganization: { weight: 1, arbitrary: fc.tuple(pick, fc.constantFrom<"owner" | "operator">("owner", "operator")).map(([index, by]) => deleteOrganization(index, by)) },
  restoreOrganization: { weight: 1, arbitrary: fc.tuple(pick, fc.constantFrom<"owner" | "operator">("owner", "operator")).map(([index, by]) => restoreOrganization(index, by)) }
} satisfies Record<string, fc.WeightedArbitrary<Step>>

const numberFrom = (name: string, fallback: number) => {
  const value = process.env[name]
  return value === undefined || value === "" ? fallback : Number(value)
}
const RUNS = numberFrom("ORGPLANE_MODEL_RUNS", 25)
const STEPS = numberFrom("ORGPLANE_MODEL_STEPS", 40)
const SEED = process.env["ORGPLANE_MODEL_SEED"]
const PATH = process.env["ORGPLANE_MODEL_PATH"]
/** Which of a shrunk sequence's steps ran: fast-check needs it beside the seed and path to replay commands. */
const REPLAY = process.env["ORGPLANE_MODEL_REPLAY"]
/** Kinds of steps left out (comma-separated: `provision,signUp`), to see what the model finds past one. */
const WITHOUT = (process.env["ORGPLANE_MODEL_WITHOUT"] ?? "").split(",").map((kind) => kind.trim()).filter((kind) => kind !== "")
const unknownKinds = WITHOUT.filter((kind) => !(kind in kinds))
if (unknownKinds.length > 0) throw new Error(`ORGPLANE_MODEL_WITHOUT: no step kind ${unknownKinds.join(", ")} (there are ${Object.keys(kinds).join(", ")})`)
/** Shrinking a counterexample replays it on the server many times: bounded, then the smallest found so far is shown. */
const SHRINK_MILLIS = numberFrom("ORGPLANE_MODEL_SHRINK_SECONDS", 120) * 1000
/** `ORGPLANE_MODEL_STORIES=1` prints what happened in every run, to see what the draws reach. */
const STORIES = process.env["ORGPLANE_MODEL_STORIES"] === "1"

let world: IdentityWorld.World
beforeAll(async () => {
  world = await IdentityWorld.start()
}, 120_000)
afterAll(async () => {
  await world?.close()
})

describe("account ownership, as a model of the identity core", () => {
  it(`holds the rule over ${RUNS} random runs of up to ${STEPS} steps`, { timeout: 120_000 + RUNS * STEPS * 300 + SHRINK_MILLIS }, async () => {
    let stepsRun = 0
    let runsStarted = 0
    let firstFailure: { readonly run: number; readonly steps: number; readonly seconds: number } | undefined
    const started = Date.now()
    const drawn = fc.oneof(...Object.entries(kinds).filter(([kind]) => !WITHOUT.includes(kind)).map(([, weighted]) => weighted))
    // Unbiased: fast-check otherwise draws every other run from small sizes, and most runs would stop after a few steps.
    const sequences = fc.noBias(fc.commands([drawn], { maxCommands: STEPS, size: "max", ...(REPLAY === undefined ? {} : { replayPath: REPLAY }) }))
    const property = fc.asyncProperty(sequences, async (commands) => {
      // Past the shrinking budget, what is left to try passes at once: the smallest counterexample so far stands.
      if (firstFailure !== undefined && Date.now() - started - firstFailure.seconds * 1000 > SHRINK_MILLIS) return
      runsStarted++
      const model = newModel(world)
      try {
        await fc.asyncModelRun(() => ({ model, real: world }), commands)
      } catch (error) {
        firstFailure ??= { run: runsStarted, steps: stepsRun + model.steps, seconds: (Date.now() - started) / 1000 }
        throw error
      } finally {
        stepsRun += model.steps
        if (STORIES) console.log(`run ${model.run}:\n${model.story.join("\n")}`)
        await restoreShared(world)
      }
    })
    const details = await fc.check(property, {
      numRuns: RUNS,
      ...(SEED === undefined ? {} : { seed: Number(SEED) }),
      ...(PATH === undefined ? {} : { path: PATH })
    })
    const seconds = (Date.now() - started) / 1000
    if (!details.failed) {
      console.log(`account ownership model: ${details.numRuns} runs, ${stepsRun} steps, ${seconds.toFixed(1)} s, seed ${details.seed}: the rule held`)
      return
    }
    const shrunk = String(details.counterexample?.[0] ?? "")
    const replay = /\/\*replayPath="([^"]*)"\*\//.exec(shrunk)?.[1]
    throw new Error([
      `The rule broke: first in run ${firstFailure?.run} of ${RUNS}, after ${firstFailure?.steps} steps and ${firstFailure?.seconds.toFixed(1)} s`,
      `(${stepsRun} steps and ${seconds.toFixed(1)} s in all, shrinking included: ${details.numShrinks} shrinks).`,
      `Replay: ORGPLANE_MODEL_SEED=${details.seed} ORGPLANE_MODEL_PATH=${details.counterexamplePath} ORGPLANE_MODEL_REPLAY='${replay ?? ""}'` +
        `${WITHOUT.length > 0 ? ` ORGPLANE_MODEL_WITHOUT=${WITHOUT.join(",")}` : ""} ORGPLANE_MODEL_STEPS=${STEPS} ORGPLANE_MODEL_RUNS=${RUNS}` +
        ` pnpm test packages/server/test/http/AccountOwnershipModel.test.ts`,
      ``,
      `Shrunk steps:`,
      ...shrunk.replace(/\s*\/\*replayPath=.*$/, "").split(",").map((label, index) => `  ${index + 1}. ${label}`),
      ``,
      details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)
    ].join("\n"))
  })
})
