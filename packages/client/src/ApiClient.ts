/**
 * The client of the whole API (`Api`), and its layers. Apart from Client.ts: a module that names `Api` takes every
 * group's schemas along into a bundle's code-splitting chunk, even where the code naming it is never called (the CLI,
 * whose commands build the clients of their own groups with `makeFor`, loaded them all at each start).
 */
import { Api } from "@orgplane/schema"
import type * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import type * as HttpClient from "effect/http/HttpClient"
import * as Layer from "effect/Layer"
import { type ClientOptions, makeWith, OrgplaneClient, type OrgplaneApiClient } from "./Client.js"

/** Builds the typed client: `client.apiKeys.list()`, one namespace per API group. */
export const make = (options: ClientOptions): Effect.Effect<OrgplaneApiClient, never, HttpClient.HttpClient> => makeWith(Api, options)

/** The client as a layer; needs an HttpClient (see `layerFetch`). */
export const layer = (options: ClientOptions) => Layer.effect(OrgplaneClient, make(options))

/** The client over the platform's `fetch`. */
export const layerFetch = (options: ClientOptions) => layer(options).pipe(Layer.provide(FetchHttpClient.layer))
