/** The setup token run.ts gives the orgplane server it starts, for sections that need the instance's operator (scim.ts). */
import { randomBytes } from "node:crypto"

export const BENCH_SETUP_TOKEN = `opsetup_${randomBytes(32).toString("base64url")}`
