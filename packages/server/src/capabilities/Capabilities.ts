/**
 * The capabilities, acting as the calling member through their own suite connection: a mail draft and a mail
 * message (suite-a), a meeting link on a calendar event (suite-b). Each checks the policy, gets the member's token
 * (SuiteConnections.use), sends one request (Upstream), and on a 401 retries once with a renewed token; a 403 is a
 * permission the connection lacks. Both end in 409 `needs_connection`.
 */
import {
  type CalendarEventPatch,
  type CreateMailDraftRequest,
  type MemberContext,
  NeedsConnection,
  type Suite,
  SuiteApiError,
  type SuiteFeature
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeCrypto from "node:crypto"
import { describe } from "../platform/AuditRecorder.js"
import { authorize } from "../platform/Principal.js"
import * as Calendar from "./Calendar.js"
import * as Mail from "./Mail.js"
import { SuiteConnections, type Use } from "./SuiteConnections.js"
import { apiErrorCode, suiteName } from "./Suites.js"
import { type Rejected, Upstream } from "./Upstream.js"
import type * as UpstreamRequest from "./Upstream.js"

const make = Effect.gen(function*() {
  const connections = yield* SuiteConnections
  const upstream = yield* Upstream

  const forbidden = (suite: Suite, rejected: Rejected) =>
    new NeedsConnection({
      suite,
      reason: "permission_denied",
      message: `The ${suiteName(suite)} refused the request (403${rejected.message === "" ? "" : `: ${rejected.message}`}): your connection lacks a permission it needs; connect again with POST /v1/capabilities/${suite}/connection/connect.`
    })

  /** One request as the member, retried once with a renewed token after a 401. */
  const act = (
    member: MemberContext,
    suite: Suite,
    feature: SuiteFeature,
    request: (use: Use) => Omit<UpstreamRequest.Request, "token" | "suite">
  ) =>
    Effect.gen(function*() {
      yield* authorize(member, "capabilities.use")
      const first = yield* connections.use(member, suite, feature)
      const send = (use: Use) => upstream.send({ ...request(use), suite, token: use.token })
      return yield* send(first).pipe(
        Effect.catchTag("Rejected", (rejected) =>
          rejected.status === 403
            ? Effect.fail(forbidden(suite, rejected))
            : Effect.flatMap(connections.renew(first), (renewed) =>
              send(renewed).pipe(
                Effect.catchTag("Rejected", (again) =>
                  again.status === 403
                    ? Effect.fail(forbidden(suite, again))
                    : Effect.andThen(
                      connections.markRejected(renewed),
                      Effect.fail(new NeedsConnection({
                        suite,
                        reason: "reconnect_required",
                        message: `The ${suiteName(suite)} refused your token again after it was renewed: connect again with POST /v1/capabilities/${suite}/connection/connect.`
                      }))
                    ))
              )))
      )
    })

  const createMailDraft = Effect.fn("Capabilities.createMailDraft")((member: MemberContext, request: CreateMailDraftRequest) =>
    Effect.map(
      act(member, "suite-a", "mailDraft", (use) => ({
        operation: "Creating the draft",
        method: "POST",
        url: Mail.draftsUrl(use.apiBaseUrl),
        body: Mail.draftBody(request),
        mutation: true
      })),
      (message) => ({ ok: true, draft: Mail.toMailMessage(message) }) as const
    ).pipe(
      // The draft lives in the suite: the event names it by the suite's message id.
      Effect.tap(({ draft }) => describe({ targets: [{ type: "mail_message", id: draft.id }] }))
    ))

  const readMailMessage = Effect.fn("Capabilities.readMailMessage")((member: MemberContext, messageId: string) =>
    Effect.map(
      act(member, "suite-a", "mailRead", (use) => ({
        operation: "Reading the message",
        method: "GET",
        url: Mail.messageUrl(use.apiBaseUrl, messageId),
        headers: Mail.PREFER_TEXT,
        mutation: false
      })),
      (message) => ({ ok: true, message: Mail.toMailMessage(message) }) as const
    ))

  const patchCalendarEvent = Effect.fn("Capabilities.patchCalendarEvent")(function*(member: MemberContext, eventId: string, patch: CalendarEventPatch) {
    // One request id per change: the calendar answers a repeated one with the same conference.
    const requestId = `orgplane-${NodeCrypto.randomUUID()}`
    const event = yield* act(member, "suite-b", "calendarWrite", (use) =>
      patch.createMeetLink
        ? {
          operation: "Adding the meeting link",
          method: "PATCH",
          url: `${Calendar.eventUrl(use.apiBaseUrl, eventId)}?conferenceDataVersion=1`,
          body: Calendar.meetLinkPatch(requestId),
          mutation: true
        }
        : { operation: "Reading the event", method: "GET", url: Calendar.eventUrl(use.apiBaseUrl, eventId), mutation: false })
    const result = Calendar.toEventResult(event)
    if (result === undefined) {
      return yield* Effect.fail(new SuiteApiError({ error: apiErrorCode("suite-b"), message: "The calendar returned no event id.", retryable: false }))
    }
    return result
  })

  return { createMailDraft, readMailMessage, patchCalendarEvent } as const
})

export class Capabilities extends Context.Service<Capabilities>()("@orgplane/server/capabilities/Capabilities", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      SuiteConnections.layer,
      Upstream.layer
    ])
  )
}
