/**
 * The server README's standalone program ("Or standalone, what `orgplane serve` runs"), for Standalone.test.ts: on a
 * free port and the in-memory database, the rest as the README writes it.
 */
import { NodeRuntime } from "@effect/platform-node"
import * as Layer from "effect/Layer"
import { layer, teardown } from "../../src/index.js"

NodeRuntime.runMain(Layer.launch(layer({ port: 0, dataDir: "memory", logLevel: "info" })), { teardown })
