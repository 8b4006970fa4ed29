/**
 * HTTP handlers of the organization document group (export, plan, apply, drift), and the drift job. Thin by design:
 * the service authorizes.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { group } from "../platform/HttpErrors.js"
import * as Drift from "./Drift.js"
import { DocumentsRepository } from "./DocumentsRepository.js"
import { LiveDocuments } from "./LiveDocuments.js"
import { OrganizationDocuments } from "./OrganizationDocuments.js"

/** The secrets an apply is given, by source (the last of a source given twice). */
const secretsBySource = (secrets: ReadonlyArray<{ readonly from: string; readonly value: string }>) =>
  Object.fromEntries(secrets.map(({ from, value }) => [from, value]))

export const OrganizationDocumentHttp = group(Api, "organizationDocument", (handlers) =>
  Effect.gen(function*() {
    const documents = yield* OrganizationDocuments
    return handlers
      .handle("export", () => Effect.flatMap(Effect.service(CurrentMember), (caller) => documents.export(caller)))
      .handle("plan", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => documents.plan(caller, payload.document)))
      .handle("apply", ({ payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => documents.apply(caller, payload.document, payload.planHash, secretsBySource(payload.secrets ?? []))))
      .handle("drift", () => Effect.flatMap(Effect.service(CurrentMember), (caller) => documents.drift(caller)))
  }))

export const layer = Layer.merge(OrganizationDocumentHttp, Drift.layer).pipe(
  Layer.provide(Layer.mergeAll(OrganizationDocuments.layer, LiveDocuments.layer, DocumentsRepository.layer))
)
