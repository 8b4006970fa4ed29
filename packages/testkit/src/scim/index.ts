/**
 * A server-agnostic SCIM 2.0 conformance suite (stands in for scim2-tester) and recorded Okta and Entra request
 * sequences with their replayer. `run({baseUrl, token})` answers one `CheckResult` per check.
 */
export { run, report, type Options } from "./Conformance.js"
export { type CheckResult, type Tag, tags } from "./Check.js"
export { client, type Target, type ScimResponse, URN, SCIM_JSON } from "./Client.js"
export { replay, type Step, type StepResult, type Expected } from "./Replay.js"
export * as Okta from "./Okta.js"
export * as Entra from "./Entra.js"
