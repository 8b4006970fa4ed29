/** `orgplane whoami`: the caller, their active organization and role, and where the credential came from. */
import { Me } from "@orgplane/schema"
import * as Option from "effect/Option"
import * as Commands from "../Commands.js"
import * as Output from "../Output.js"
import type * as Target from "../Target.js"

const credentialLabel = (target: Target.Target) =>
  Option.match(target.credential, {
    onNone: () => "none",
    onSome: (credential) =>
      `${credential.kind === "token" ? "session token" : "API key"} from ${
        credential.source === "profile" ? `profile '${target.profileName}'` : credential.source === "flag" ? "a flag" : "the environment"
      }`
  })

export const whoami = Commands.endpoint("whoami", {
  summary: "Show who the credential belongs to, the active organization and your role in it.",
  inputs: {},
  call: (client) => client.users.me(),
  output: Me,
  human: ({ membership, organization, user }, _, target) =>
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
    ])
})
