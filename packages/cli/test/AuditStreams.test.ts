/**
 * `orgplane audit streams`: the CLI in-process (see Harness.ts) against a real server and a real receiver on
 * loopback: an owner creates a stream (the secret printed once), lists, shows, tests, pauses, rotates and deletes it;
 * an admin reads but is refused a change; bad values are refused before anything is sent. The server is
 * RealServer.ts's.
 */
import { AuditStreamPage, AuditStreamResponse, AuditStreamTestResult, AuditStreamWithSecret } from "@orgplane/schema"
import * as Schema from "effect/Schema"
import * as FakeAuditReceiver from "../../server/test/support/AuditReceiver.js"
import * as Http from "../../../packages/testkit/src/Http.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json, type Result } from "./Harness.js"
import * as RealServer from "./RealServer.js"

let server: RealServer.RealServer
let receiver: FakeAuditReceiver.FakeAuditReceiver
beforeAll(async () => {
  receiver = await FakeAuditReceiver.start()
  server = await RealServer.start({ ORGPLANE_OUTBOUND_ALLOW_PRIVATE: "true" })
})
afterAll(async () => {
  await server?.close()
  await receiver?.close()
  await cleanup()
})

const decoded = <A, I>(schema: Schema.Codec<A, I>, result: Result): A => {
  expect(result.code, result.stderr).toBe(0)
  return Schema.decodeUnknownSync(schema)(json(result))
}

describe("orgplane audit streams", () => {
  it("creates, reads, tests, pauses, rotates and deletes a stream; the secret is printed only on create and rotate", async () => {
    const org = await Http.staffed(server.url, "Streaming")
    const { cli } = await fresh()
    const owner = (args: ReadonlyArray<string>) => cli(args, { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.owner.token })
    const admin = (args: ReadonlyArray<string>) => cli(args, { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.admin.token })

    const created = await owner(["audit", "streams", "create", `${receiver.url}/cli`, "--description", "From the CLI"])
    expect(created.code, created.stderr).toBe(0)
    const secret = /^(whsec_\S+)$/m.exec(created.stdout)?.[1]
    expect(secret).toBeDefined()
    expect(created.stdout).toContain("shown only this once")
    const streamId = /^Created audit stream (ast_\w+)/.exec(created.stdout)![1]!
    receiver.setSecrets(secret!)

    const listed = decoded(AuditStreamPage, await admin(["audit", "streams", "list", "--json"]))
    expect(listed.items.map((stream) => [stream.id, stream.description, stream.status])).toEqual([[streamId, "From the CLI", "active"]])
    const shown = await admin(["audit", "streams", "get", streamId])
    expect(shown.stdout).toContain(`${streamId} → ${receiver.url}/cli`)
    expect(shown.stdout).not.toContain(secret!)

    const tested = decoded(AuditStreamTestResult, await owner(["audit", "streams", "test", streamId, "--json"]))
    expect([tested.delivered, tested.status]).toEqual([true, 200])
    expect(receiver.deliveries.find((delivery) => delivery.deliveryId === tested.deliveryId)?.verified).toBe(true)
    expect((await owner(["audit", "streams", "test", streamId])).stdout).toMatch(/^Delivered: the endpoint answered 200/)

    const paused = decoded(AuditStreamResponse, await owner(["audit", "streams", "update", streamId, "--status", "paused", "--clear-description", "--json"]))
    expect([paused.stream.status, paused.stream.description, paused.stream.delivery.nextAttemptAt]).toEqual(["paused", null, null])

    const refused = await admin(["audit", "streams", "update", streamId, "--status", "active"])
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("insufficient_role")

    const rotated = decoded(AuditStreamWithSecret, await owner(["audit", "streams", "rotate-secret", streamId, "--json"]))
    expect(rotated.secret).toMatch(/^whsec_/)
    expect(rotated.secret).not.toBe(secret)

    const deleted = await owner(["audit", "streams", "delete", streamId])
    expect(deleted.code, deleted.stderr).toBe(0)
    expect((await owner(["audit", "streams", "get", streamId])).code).not.toBe(0)
  })

  it("refuses bad values before anything is sent, and an update without a change", async () => {
    const org = await Http.owner(server.url, "Refused")
    const { cli } = await fresh()
    const owner = (args: ReadonlyArray<string>) => cli(args, { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.token })
    const badUrl = await owner(["audit", "streams", "create", "ftp://example.com/x"])
    expect(badUrl.code).not.toBe(0)
    expect(badUrl.stderr).toMatch(/url/i)
    const badId = await owner(["audit", "streams", "get", "tem_01jc0000000000000000000000"])
    expect(badId.code).not.toBe(0)
    expect(badId.stderr).toContain("streamId")
    const nothing = await owner(["audit", "streams", "update", "ast_01jc0000000000000000000000"])
    expect(nothing.code).not.toBe(0)
    expect(nothing.stderr).toContain("give something to change")
    const both = await owner(["audit", "streams", "update", "ast_01jc0000000000000000000000", "--description", "x", "--clear-description"])
    expect(both.stderr).toContain("not both")
  })
})
