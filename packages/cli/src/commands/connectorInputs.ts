/**
 * Inputs shared by the `orgplane connectors` commands: the ids of instances and targets, and the flags several of
 * them take (settings as JSON, a repository).
 */
import { ConnectorInstanceId, ConnectorTargetId, JsonObject, RepositoryFullName } from "@orgplane/schema"
import * as Schema from "effect/Schema"
import * as Inputs from "../Inputs.js"

export const instanceId = Inputs.argument("instanceId", { schema: ConnectorInstanceId, description: "The connector instance (cin_…)." })
export const targetId = Inputs.argument("targetId", { schema: ConnectorTargetId, description: "The target (ctg_…)." })

/** `--config '{"…": …}'`: a JSON object, parsed while parsing the flags, sent whole (it replaces the stored one). */
export const config = (description: string) =>
  Inputs.optional(Inputs.text("config", { placeholder: "<json>", description, schema: Schema.fromJsonString(JsonObject) }))

export const repository = (description: string) =>
  Inputs.optional(Inputs.text("repository", { placeholder: "<owner/name>", description, schema: RepositoryFullName }))

/** Settings as shown in a field list: compact JSON. */
export const json = (value: unknown) => JSON.stringify(value)
