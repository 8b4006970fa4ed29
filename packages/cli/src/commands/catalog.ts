/**
 * What the catalog's commands (`config-objects`, `plugins`, `marketplaces`, `access`) share: how a catalog entry's
 * status and lifecycle read, and the check that an update got something to change.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { UsageError } from "../Errors.js"

/** `active`, or `deleted 2025-…` with the time. */
export const statusOf = (entry: { readonly status: string; readonly deletedAt: Date | null }) =>
  entry.deletedAt === null ? entry.status : `${entry.status} ${entry.deletedAt.toISOString().replace(/\.\d{3}Z$/, "Z")}`

/** "1 config object", "2 config objects". */
export const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? "" : "s"}`

/** Fails with a usage error naming the flags when none of them was given (an update needs something to change). */
export const requireSome = (flags: ReadonlyArray<readonly [flag: string, value: Option.Option<unknown> | boolean]>) =>
  flags.some(([, value]) => typeof value === "boolean" ? value : Option.isSome(value))
    ? Effect.void
    : Effect.fail(
      new UsageError({
        message: `give at least one of ${flags.map(([flag]) => `--${flag}`).join(", ")}: there is nothing to change otherwise`
      })
    )

/** `{ [key]: value }` when the switch is on, else `{}` (a query's `includeDeleted` and the like). */
export const ifOn = <const K extends string>(key: K, on: boolean): { readonly [P in K]?: true } =>
  on ? ({ [key]: true } as { readonly [P in K]: true }) : {}
