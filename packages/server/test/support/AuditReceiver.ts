/**
 * packages/testkit's fake receiver of audit streams (AuditReceiver.ts, plain Node), checking each delivery's signature
 * with `@orgplane/client`'s `verifyAuditStreamSignature`.
 */
import * as Client from "@orgplane/client"
import * as AuditReceiver from "../../../../packages/testkit/src/AuditReceiver.js"

export type { FakeAuditReceiver, ReceivedDelivery } from "../../../../packages/testkit/src/AuditReceiver.js"

export const start = () => AuditReceiver.start(Client)
