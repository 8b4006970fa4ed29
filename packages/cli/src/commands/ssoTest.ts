/**
 * `orgplane sso connections test <connectionId>`: a test of a connection's current revision, signed in at the
 * provider as yourself in a browser, and its report once the provider sent the browser back (any protocol).
 */
import type { OrgplaneApiClient } from "@orgplane/client"
import { SsoConnectionId, type SsoIntentId, type SsoTestReport, SsoTestResponse } from "@orgplane/schema"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Commands from "../Commands.js"
import { CommandFailed } from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import * as Progress from "../Progress.js"
import * as SsoBrowser from "../SsoBrowser.js"

/** A claim as the provider sent it; text with control characters is quoted, so it cannot drive the terminal. */
const show = (value: unknown) =>
  typeof value === "string" && !/[\u0000-\u001f\u007f-\u009f]/.test(value)
    ? value
    : JSON.stringify(value).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

export const describeTest = (test: SsoTestReport) =>
  [
    `Test ${test.id} of ${test.connectionId} (revision ${test.configRevision}): ${test.status}${
      test.completedAt === null ? "" : ` at ${Output.date(test.completedAt)}`
    }`,
    ...(test.failure === null ? [] : [`  failure: ${test.failure.code}: ${test.failure.message}`]),
    ...(test.profile === null ? [] : [
      `  profile: ${test.profile.email ?? "no email"}${test.profile.emailVerified === false ? " (not verified)" : ""}, name ${
        test.profile.name ?? "-"
      }, subject ${test.profile.subject}`,
      `  groups: ${test.profile.groups.length === 0 ? "none" : test.profile.groups.join(", ")}`
    ]),
    ...(test.claims === null ? [] : [
      "  received:",
      ...Object.entries(test.claims).map(([name, value]) => `    ${name}: ${show(value)}`)
    ])
  ].join("\n")

/** Asks for the report every second until it is no longer pending, for at most the intent's 5 minutes (and a margin). */
const awaitReport = (client: OrgplaneApiClient, connectionId: SsoConnectionId, testId: SsoIntentId) =>
  Progress.spinner("waiting for the test sign-in in the browser…", () =>
    Effect.gen(function*() {
      for (;;) {
        const { test } = yield* client.sso.getTest({ params: { connectionId, testId } })
        if (test.status !== "pending") return test
        yield* Effect.sleep(Duration.seconds(1))
      }
    })).pipe(
      Effect.timeoutOrElse({
        duration: Duration.sum(SsoBrowser.INTENT_LIFETIME, Duration.seconds(10)),
        orElse: () =>
          Effect.fail(
            new CommandFailed({
              error: "test_timeout",
              message: `nobody completed test ${testId} in the browser within 5 minutes: run 'orgplane sso connections test ${connectionId}' again`
            })
          )
      })
    )

export const test = Commands.leaf("test", {
  summary: "Test an SSO connection: sign in at the provider as yourself in a browser, then print the report.",
  details: [
    "Starts a test of the connection's current revision (valid 5 minutes, for you only), opens the provider's sign-in page in your browser (or, with --no-browser or without a display, prints its URL on stderr), waits until the provider sent the browser back, and prints the report: the claims or attributes received, the profile the mapping made, or the failure's code and message. Needs a session, not an API key. A failed test exits 1 (`sso_test_failed`, the report's code in the message); a successful one lets 'orgplane sso connections activate' go ahead."
  ],
  inputs: {
    connectionId: Inputs.argument("connectionId", { schema: SsoConnectionId, description: "The connection (ssc_…)." }),
    noBrowser: Inputs.boolean("no-browser", { description: "Print the sign-in URL instead of opening a browser." })
  },
  run: (input) =>
    Commands.withClient(input, (client) =>
      Effect.gen(function*() {
        const started = yield* client.sso.startTest({ params: { connectionId: input.connectionId } })
        let report = started.test
        if (report.status === "pending") {
          yield* SsoBrowser.show(started.authorizationUrl, { noBrowser: input.noBrowser, purpose: "sign in at the identity provider as yourself" })
          report = yield* awaitReport(client, input.connectionId, report.id)
        }
        yield* Output.emit(input.global, SsoTestResponse, { test: report }, ({ test }) => describeTest(test))
        if (report.failure !== null) {
          return yield* new CommandFailed({ error: "sso_test_failed", message: `the test failed: ${report.failure.code}: ${report.failure.message}` })
        }
      }))
})
