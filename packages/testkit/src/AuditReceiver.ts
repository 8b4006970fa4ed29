/**
 * A fake receiver of audit streams on 127.0.0.1: a real node:http server that checks each delivery's
 * `Orgplane-Signature` with a client package's `verifyAuditStreamSignature` (packages/server's
 * test/support/AuditReceiver.ts gives it `@orgplane/client`'s) against the secrets it
 * is given, records every request (verified or not), and acknowledges verified ones with 200 (a bad signature gets 401). It
 * can answer an error status for a while (`failWith(503)`), or go down and come back on the same port (`stop`,
 * `start`): a receiver that is down.
 */
import * as Http from "node:http"
import type * as Net from "node:net"

export interface ReceivedDelivery {
  readonly path: string
  readonly deliveryId: string | undefined
  readonly signature: string | undefined
  readonly contentType: string | undefined
  /** The body as sent. */
  readonly body: string
  /** Whether the signature verified with one of the secrets, within the tolerance. */
  readonly verified: boolean
  /** The status answered. */
  readonly status: number
  /** The events of the body, as sent (empty when it did not parse). */
  readonly events: ReadonlyArray<{ readonly id: string; readonly organizationId: string; readonly action: string; readonly occurredAt: string }>
}

export interface FakeAuditReceiver {
  /** `http://127.0.0.1:<port>`: the base URL (any path is accepted). */
  readonly url: string
  readonly port: number
  /** Every request received, in order. */
  readonly deliveries: ReadonlyArray<ReceivedDelivery>
  /** The secrets a signature may verify with (a stream's, after create or rotation). */
  readonly setSecrets: (...secrets: ReadonlyArray<string>) => void
  /** Answer this status (without acknowledging) to every request until `recover()`. */
  readonly failWith: (status: number) => void
  readonly recover: () => void
  /** Closes the port (connections refused) until `start()` listens on it again. */
  readonly stop: () => Promise<void>
  readonly start: () => Promise<void>
  readonly close: () => Promise<void>
}

/** What the receiver takes from a client package: the headers' names and the signature check (`@orgplane/client`'s). */
export interface Signatures {
  readonly AUDIT_STREAM_SIGNATURE_HEADER: string
  readonly AUDIT_STREAM_DELIVERY_HEADER: string
  readonly verifyAuditStreamSignature: (secret: string, header: string | ReadonlyArray<string> | null | undefined, rawBody: string) => Promise<boolean>
}

export const start = async ({ AUDIT_STREAM_DELIVERY_HEADER, AUDIT_STREAM_SIGNATURE_HEADER, verifyAuditStreamSignature }: Signatures): Promise<FakeAuditReceiver> => {
  const deliveries: Array<ReceivedDelivery> = []
  let secrets: ReadonlyArray<string> = []
  let failing: number | undefined

  const handler = (request: Http.IncomingMessage, response: Http.ServerResponse) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", async () => {
      const body = Buffer.concat(chunks).toString("utf8")
      const header = request.headers[AUDIT_STREAM_SIGNATURE_HEADER]
      let verified = false
      for (const secret of secrets) if (await verifyAuditStreamSignature(secret, header, body)) verified = true
      const status = failing ?? (verified ? 200 : 401)
      let events: ReceivedDelivery["events"] = []
      try {
        events = (JSON.parse(body) as { events?: ReceivedDelivery["events"] }).events ?? []
      } catch {
        events = []
      }
      const delivery = request.headers[AUDIT_STREAM_DELIVERY_HEADER]
      deliveries.push({
        path: request.url ?? "",
        deliveryId: typeof delivery === "string" ? delivery : undefined,
        signature: typeof header === "string" ? header : undefined,
        contentType: request.headers["content-type"],
        body,
        verified,
        status,
        events
      })
      response.writeHead(status, { "content-type": "application/json" })
      response.end(JSON.stringify({ ok: status === 200 }))
    })
  }

  let server = Http.createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as Net.AddressInfo
  let listening = true

  const stop = async () => {
    if (!listening) return
    listening = false
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    deliveries,
    setSecrets: (...given) => {
      secrets = given
    },
    failWith: (status) => {
      failing = status
    },
    recover: () => {
      failing = undefined
    },
    stop,
    start: async () => {
      if (listening) return
      server = Http.createServer(handler)
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject)
        server.listen(port, "127.0.0.1", resolve)
      })
      listening = true
    },
    close: stop
  }
}
