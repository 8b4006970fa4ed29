/**
 * node:crypto's `randomBytes` made deterministic while one computation runs: the bytes a seed names (SHA-256 of the
 * seed and a counter, block after block), or fixed bytes, the real source restored after. For differential tests whose
 * recorded values (support/Effect3.ts) are keyed by what the port produced with random bytes inside (an AES-GCM IV, a
 * password salt, a generated key file): the port's draws are pinned to the bytes the recording drew, so it produces
 * the very output the recorded key names. (The Effect 3 originals' draws were pinned the same way when they were
 * recorded.)
 *
 * Both trees read `randomBytes` through `import * as NodeCrypto from "node:crypto"`, whose bindings follow the
 * built-in module's exports after `syncBuiltinESMExports()`. Only the synchronous form is pinned (the callback form
 * is left to the real source, and fails the computation if called, so nothing drawn there goes unpinned).
 */
import * as Effect from "effect/Effect"
import * as NodeCrypto from "node:crypto"
import { createRequire, syncBuiltinESMExports } from "node:module"

const builtin: { randomBytes: (size: number, callback?: unknown) => Buffer } = createRequire(import.meta.url)("node:crypto")

/** `seed`'s byte stream: SHA-256(seed, block number), block after block. */
const stream = (seed: string) => {
  let block = 0
  let pending = Buffer.alloc(0)
  return (size: number): Buffer => {
    while (pending.length < size) {
      pending = Buffer.concat([pending, NodeCrypto.createHash("sha256").update(`${seed}\u0000${block++}`).digest()])
    }
    const taken = Buffer.from(pending.subarray(0, size))
    pending = pending.subarray(size)
    return taken
  }
}

/** Replaces `randomBytes` with `next` (`seed`'s stream when given a seed); the function returned puts the real one back. */
const pin = (seed: string | ((size: number) => Buffer)): () => void => {
  const real = builtin.randomBytes
  const next = typeof seed === "string" ? stream(seed) : seed
  builtin.randomBytes = (size, callback) => {
    if (callback !== undefined) throw new Error("PinnedRandom: randomBytes with a callback is not pinned")
    return next(size)
  }
  syncBuiltinESMExports()
  return () => {
    builtin.randomBytes = real
    syncBuiltinESMExports()
  }
}

/** `run()`, every `randomBytes` it calls drawn from `seed`'s stream. */
export const pinned = <A>(seed: string, run: () => A): A => {
  const restore = pin(seed)
  try {
    return run()
  } finally {
    restore()
  }
}

/**
 * `run()`, every `randomBytes(size)` it calls giving the first `size` bytes of `bytes`: a fixed IV, say, that a
 * recorded key names.
 */
export const pinnedTo = <A>(bytes: Buffer, run: () => A): A => {
  const restore = pin((size) => {
    if (size > bytes.length) throw new Error(`PinnedRandom: ${size} bytes drawn, ${bytes.length} pinned`)
    return Buffer.from(bytes.subarray(0, size))
  })
  try {
    return run()
  } finally {
    restore()
  }
}

/** `run()`'s promise, every `randomBytes` called until it settles drawn from `seed`'s stream. */
export const pinnedAsync = async <A>(seed: string, run: () => Promise<A>): Promise<A> => {
  const restore = pin(seed)
  try {
    return await run()
  } finally {
    restore()
  }
}

/** `effect`, every `randomBytes` it calls while it runs drawn from `seed`'s stream (an Effect 4 effect: the port's). */
export const pinnedEffect = <A, E, R>(seed: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.acquireUseRelease(Effect.sync(() => pin(seed)), () => effect, (restore) => Effect.sync(restore))
