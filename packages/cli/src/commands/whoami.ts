/** `orgplane whoami`: the caller, their active organization and role, and where the credential came from. */
import { Command } from "@effect/cli"
import { Me } from "@orgplane/schema"
import { Effect, Option } from "effect"
import { global } from "../GlobalOptions.js"
import * as Output from "../Output.js"
import * as Target from "../Target.js"

const credentialLabel = (target: Target.Target) =>
  Option.match(target.credential, {
    onNone: () => "none",
    onSome: (credential) =>
      `${credential.kind === "token" ? "session token" : "API key"} from ${
        credential.source === "profile" ? `profile '${target.profileName}'` : credential.source === "flag" ? "a flag" : "the environment"
      }`
  })

export const whoami = Command.make("whoami", { global }, ({ global }) =>
  Target.run(global, (target) =>
    Effect.gen(function*() {
      const client = yield* Target.connect(target, { authenticated: true })
      const me = yield* client.users.me()
      yield* Output.emit(global, Me, me, ({ membership, organization, user }) =>
        Output.fields([
          ["User", `${user.name} <${user.email}>  ${user.id}`],
          [
            "Organization",
            organization === null
              ? "none (create one with 'orgplane orgs create <name>')"
              : `${organization.name}  ${organization.id}  plan ${organization.plan}${organization.provisional ? "  (provisional)" : ""}`
          ],
          ["Role", membership?.role ?? "-"],
          ["Server", target.url],
          ["Credential", credentialLabel(target)]
        ]))
    }))).pipe(Command.withDescription("Show who the credential belongs to and the active organization."))
