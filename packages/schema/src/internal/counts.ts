/** Counts: whole numbers from 0, as Effect 3's `Schema.NonNegativeInt` read them (Effect 4 has none). */
import * as Schema from "effect/Schema"

/**
 * A count. Effect 3's document referred to its `NonNegative` component beside `type: integer`; Effect 4 writes this
 * inline as `{ type: integer, minimum: 0, maximum: 2^53 - 1 }` (a check on a named schema would lose its name anyway),
 * which the document writes as Effect 3 did (`OpenApiComponents.integersAsPublished`).
 */
export const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
