/**
 * `orgplane connectors targets`: the branch (of the instance's repository, or another) a connector instance follows;
 * discovery reads the first. Access is the instance's: viewer reads, editor changes.
 */
import { type ConnectorTarget, ConnectorTargetDetail, ConnectorTargetPage, ConnectorTargetResponse, CreateConnectorTargetRequest, exampleId } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Commands from "../Commands.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import { requireSome } from "./catalog.js"
import { config, instanceId, json, repository, targetId } from "./connectorInputs.js"

const branch = (description: string) =>
  Inputs.optional(Inputs.text("branch", { placeholder: "<branch>", description, schema: CreateConnectorTargetRequest.fields.externalTargetRef }))

const describeTarget = (target: ConnectorTarget) => `target ${target.id}: branch ${target.externalTargetRef} of ${target.remoteId}`

export const targetsList = Commands.list("list", {
  summary: "List an instance's targets, oldest first (discovery uses the first; needs viewer access).",
  noun: "targets",
  inputs: { instanceId },
  call: (client, { instanceId }, page) =>
    client.connectorInstances.listTargets({ params: { connectorInstanceId: instanceId }, query: page }),
  output: ConnectorTargetPage,
  columns: [
    ["id", (target) => target.id],
    ["repository", (target) => target.remoteId],
    ["branch", (target) => target.externalTargetRef],
    ["created", (target) => Output.date(target.createdAt)]
  ]
})

const targetFields = (target: ConnectorTarget) =>
  Output.fields([
    ["id", target.id],
    ["instance", target.connectorInstanceId],
    ["repository", target.remoteId],
    ["branch", target.externalTargetRef],
    ["config", json(target.targetConfigJson)],
    ["created", Output.date(target.createdAt)],
    ["updated", Output.date(target.updatedAt)]
  ])

export const targetsGet = Commands.endpoint("get", {
  summary: "Show a target (needs viewer access on its instance).",
  inputs: { targetId },
  call: (client, { targetId }) => client.connectorTargets.get({ params: { connectorTargetId: targetId } }),
  output: ConnectorTargetDetail,
  human: ({ item }) => targetFields(item)
})

export const targetsAdd = Commands.endpoint("add", {
  summary: "Make an instance follow a branch of its repository (needs editor access).",
  inputs: {
    instanceId,
    branch: Inputs.text("branch", { placeholder: "<branch>", description: "The branch to follow.", schema: CreateConnectorTargetRequest.fields.externalTargetRef }),
    repository: repository("The repository, as owner/name; default: the instance's."),
    config: config("Settings of the target as a JSON object (not read by the server).")
  },
  call: (client, { branch, config, instanceId, repository }) =>
    client.connectorInstances.createTarget({
      params: { connectorInstanceId: instanceId },
      payload: { externalTargetRef: branch, ...Inputs.ifSome("remoteId", repository), ...Inputs.ifSome("config", config) }
    }),
  output: ConnectorTargetResponse,
  human: ({ item }) => `Added ${describeTarget(item)}.`
})

export const targetsUpdate = Commands.endpoint("update", {
  examples: [
    ["Follow another branch.", ["connectors", "targets", "update", exampleId("ctg"), "--branch", "release"]],
  ],
  summary: "Change a target's repository, branch or settings (needs editor access); give at least one.",
  inputs: {
    targetId,
    repository: repository("The new repository, as owner/name."),
    branch: branch("The new branch."),
    config: config("Settings as a JSON object; replaces the stored settings whole.")
  },
  call: (client, { branch, config, repository, targetId }) =>
    Effect.andThen(
      requireSome([["repository", repository], ["branch", branch], ["config", config]]),
      client.connectorTargets.update({
        params: { connectorTargetId: targetId },
        payload: {
          ...Inputs.ifSome("remoteId", repository),
          ...Inputs.ifSome("externalTargetRef", branch),
          ...Inputs.ifSome("config", config)
        }
      })
    ),
  output: ConnectorTargetResponse,
  human: ({ item }) => `Updated ${describeTarget(item)}.`
})

export const targets = Commands.group("targets", "Manage the branches connector instances follow (access is the instance's).", [
  targetsList,
  targetsGet,
  targetsAdd,
  targetsUpdate
])
