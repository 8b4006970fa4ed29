/**
 * The client addresses each account signed in from with its password, and when last: the sign-in throttle spares
 * them when strangers have spent the account's count (identity/SignInThrottle.ts), so guessing from many addresses
 * cannot shut the owner out. Keyed like the throttle's counts, by a hash of the email: the statement that reads it
 * is the same whether an account has the email or not. Not tenant-scoped: an account belongs to no one organization.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE sign_in_addresses (
  account_key text NOT NULL,
  address text NOT NULL,
  last_signed_in_at timestamptz NOT NULL,
  PRIMARY KEY (account_key, address)
);
`))
