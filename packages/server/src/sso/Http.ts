/** HTTP handlers of the SSO group. Thin by design: the service checks the plan and the role. */
import { Api, CurrentMember } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { group } from "../platform/HttpErrors.js"
import { requestBaseUrl } from "../platform/PublicUrl.js"
import { Saml } from "./Saml.js"
import { Sso } from "./Sso.js"


export const SsoHttp = group(Api, "sso", (handlers) =>
  Effect.gen(function*() {
    const sso = yield* Sso
    const member = CurrentMember
    return handlers
      .handle("listDomains", () => Effect.flatMap(member, sso.listDomains))
      .handle("requestDomainVerification", ({ urlParams }) =>
        Effect.flatMap(member, (caller) => sso.requestDomainVerification(caller, urlParams.domain)))
      .handle("verifyDomain", ({ urlParams }) => Effect.flatMap(member, (caller) => sso.verifyDomain(caller, urlParams.domain)))
      .handle("deleteDomain", ({ path }) => Effect.flatMap(member, (caller) => sso.deleteDomain(caller, path.domain)))
      .handle("createConnection", ({ payload }) =>
        Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => sso.createConnection(caller, payload, base))))
      .handle("listConnections", () => Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => sso.listConnections(caller, base))))
      .handle("getConnection", ({ path }) =>
        Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => sso.getConnection(caller, path.connectionId, base))))
      .handle("updateConnection", ({ path, payload }) =>
        Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => sso.updateConnection(caller, path.connectionId, payload, base))))
      .handle("deleteConnection", ({ path }) => Effect.flatMap(member, (caller) => sso.deleteConnection(caller, path.connectionId)))
      .handle("activateConnection", ({ path }) =>
        Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => sso.activateConnection(caller, path.connectionId, base))))
      .handle("deactivateConnection", ({ path }) =>
        Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => sso.deactivateConnection(caller, path.connectionId, base))))
      .handle("getTest", ({ path }) => Effect.flatMap(member, (caller) => sso.getTest(caller, path.connectionId, path.testId)))
  }))

export const layer = SsoHttp.pipe(Layer.provide(Sso.Default), Layer.provide(Saml.Live))
