/** testkit's fake receiver of audit streams (AuditReceiver.ts), checking signatures with `@orgplane/client`'s `verifyAuditStreamSignature`. */
import * as Client from "@orgplane/client"
import * as AuditReceiver from "./AuditReceiver.js"

export type { FakeAuditReceiver, ReceivedDelivery } from "./AuditReceiver.js"

export const start = () => AuditReceiver.start(Client)
