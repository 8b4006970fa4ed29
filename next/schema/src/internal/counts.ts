/** Counts: whole numbers from 0, as Effect 3's `Schema.NonNegativeInt` read them (Effect 4 has none). */
import * as Schema from "effect/Schema"

/**
 * A count. Effect 3's document referred to its `NonNegative` component beside `type: integer`; this is written inline
 * as `{ type: integer, minimum: 0 }`, the same values (a check on a named schema would lose its name anyway).
 */
export const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
