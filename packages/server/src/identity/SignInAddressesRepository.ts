/**
 * Storage of the client addresses each account signed in from with its password (not tenant-scoped, like accounts).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"

const make = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Records a successful sign-in of `accountKey` from `address` at `at`. */
    const remember = Effect.fn("SignInAddressesRepository.remember")(function*(accountKey: string, address: string, at: Date) {
      yield* sql`INSERT INTO sign_in_addresses (account_key, address, last_signed_in_at) VALUES (${accountKey}, ${address}, ${at})
                   ON CONFLICT (account_key, address) DO UPDATE SET last_signed_in_at = GREATEST(sign_in_addresses.last_signed_in_at, EXCLUDED.last_signed_in_at)`
    })

    /** Whether `accountKey` signed in from `address` after `since`. */
    const signedInSince = Effect.fn("SignInAddressesRepository.signedInSince")(function*(accountKey: string, address: string, since: Date) {
      const rows = yield* sql<{ found: number }>`SELECT 1 AS found FROM sign_in_addresses
                                                  WHERE account_key = ${accountKey} AND address = ${address} AND last_signed_in_at > ${since}`
      return rows.length > 0
    })

    /** The account's email changed: its addresses are the new email's from now on (the latest sign-in kept). */
    const move = Effect.fn("SignInAddressesRepository.move")(function*(from: string, to: string) {
      yield* sql`INSERT INTO sign_in_addresses (account_key, address, last_signed_in_at)
                   SELECT ${to}, address, last_signed_in_at FROM sign_in_addresses WHERE account_key = ${from}
                   ON CONFLICT (account_key, address) DO UPDATE SET last_signed_in_at = GREATEST(sign_in_addresses.last_signed_in_at, EXCLUDED.last_signed_in_at)`
      yield* sql`DELETE FROM sign_in_addresses WHERE account_key = ${from}`
    })

    /** The account was deleted: the addresses it signed in from are forgotten. */
    const forget = Effect.fn("SignInAddressesRepository.forget")(function*(accountKey: string) {
      yield* sql`DELETE FROM sign_in_addresses WHERE account_key = ${accountKey}`
    })

    return { remember, signedInSince, move, forget } as const
  })

export class SignInAddressesRepository extends Context.Service<SignInAddressesRepository>()("@orgplane/server/identity/SignInAddressesRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
