/** Counts: whole numbers from 0 (Effect 4 has no `Schema.NonNegativeInt`). */
import * as Schema from "effect/Schema"

/**
 * A count. Effect 4 writes this inline as `{ type: integer, minimum: 0, maximum: 2^53 - 1 }` (a check on a named
 * schema would lose its name anyway), which the document writes as a reference to its `NonNegative` component beside
 * `type: integer` (`OpenApiComponents.integersAsPublished`).
 */
export const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
